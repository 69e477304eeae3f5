// tests/node/roundtrip.js: the unmodified ali-ons client (npm) against an rmq
// cluster, byte for byte. One producer sends messages with every byte value
// in the body, bodies at and around ali-ons' compression threshold
// (compressMsgBodyOverHowmuch, 4 KiB: at or over it the body goes out
// zlib-deflated with sysFlag bit 0), a large compressible body and an
// incompressible one, each with its tag, keys and user properties, plus one
// of a tag the consumer does not subscribe to. A push consumer then gets
// each message once, under the msgId the send answered, with the same body,
// tag, keys and properties; compressed ones arrive flagged compressed with
// the body CRC of the deflated bytes the producer sent (the broker keeps
// them untouched); the other tag never arrives. Prints TAP lines numbered
// from FIRST; exits 1 when a check fails.
//
//   node roundtrip.js NAMESRV TOPIC GROUP FIRST
'use strict';

const zlib = require('zlib');
const httpclient = require('urllib');
const { Producer, Consumer, Message } = require('ali-ons');

const COMPRESS_OVER = 4 * 1024; // ali-ons' default compressMsgBodyOverHowmuch
const TAGS = [ 'TagBin', 'TagEdge', 'TagZip', 'TagRnd' ];

// every byte value, in order, repeated to LEN bytes
function allBytes(len) {
  const b = Buffer.alloc(len);
  for (let i = 0; i < len; i++) b[i] = i & 0xff;
  return b;
}

// LEN bytes of a xorshift sequence: deflate cannot shrink them
function noise(len) {
  const b = Buffer.alloc(len);
  let x = 2463534242;
  for (let i = 0; i < len; i++) {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    b[i] = x & 0xff;
  }
  return b;
}

function cases() {
  const text = Buffer.from('rmq ali-ons round trip, grün ✓ 日本語\n'.repeat(8192));
  return [
    { name: 'all 256 byte values', tag: 'TagBin', keys: [ 'bin-1', 'bin-2' ], body: allBytes(256),
      props: { color: 'blue', note: 'grün ✓ 日本語', empty: '' } },
    { name: 'one byte under the compress threshold', tag: 'TagEdge', keys: [ 'edge-under' ],
      body: allBytes(COMPRESS_OVER - 1), props: { edge: 'under' } },
    { name: 'at the compress threshold', tag: 'TagEdge', keys: [ 'edge-at' ],
      body: allBytes(COMPRESS_OVER), props: { edge: 'at' } },
    { name: 'other tag', tag: 'TagOther', keys: [ 'other' ], body: Buffer.from('filtered out'), props: {} },
    { name: `${text.length} B of text`, tag: 'TagZip', keys: [ 'zip-1' ], body: text,
      props: { size: String(text.length), 'with space': 'a b' } },
    { name: '64 KiB of noise', tag: 'TagRnd', keys: [ 'rnd-1', 'rnd-2', 'rnd-3' ], body: noise(65536),
      props: { kind: 'noise' } },
    { name: 'a single 0x00 byte', tag: 'TagBin', keys: [ 'zero' ], body: Buffer.from([ 0 ]), props: { z: '0' } },
  ];
}

let tapNo;
let failed = false;
function check(ok, what, detail) {
  console.log(`${ok ? 'ok' : 'not ok'} ${tapNo++} - ${what}`);
  if (!ok) {
    failed = true;
    for (const line of [].concat(detail || [])) console.log(`# ${line}`);
  }
}

function options(nameSrv, extra) {
  return Object.assign({ httpclient, nameSrv: nameSrv.split(';') }, extra);
}

async function produce(nameSrv, topic, list) {
  const producer = new Producer(options(nameSrv, { producerGroup: 'node_roundtrip_producer' }));
  const errors = [];
  producer.on('error', err => errors.push(err.message));
  await producer.ready();
  for (const c of list) {
    const msg = new Message(topic, c.tag, Buffer.from(c.body));
    msg.keys = c.keys;
    Object.assign(msg.properties, c.props);
    const r = await producer.send(msg);
    c.sent = { msgId: r.msgId, status: r.sendStatus, broker: r.messageQueue.brokerName, queueId: r.messageQueue.queueId };
  }
  await producer.close();
  return errors;
}

function consume(nameSrv, topic, group, list, seconds) {
  const consumer = new Consumer(options(nameSrv, {
    consumerGroup: group,
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
  }));
  const got = [];
  got.errors = [];
  const want = list.filter(c => c.tag !== 'TagOther').length;
  return new Promise(resolve => {
    let settle;
    const finish = async () => {
      clearTimeout(timer);
      await consumer.close();
      resolve(got);
    };
    const timer = setTimeout(finish, seconds * 1000);
    consumer.on('error', err => got.errors.push(err.message));
    consumer.subscribe(topic, TAGS.join(' || '), async msg => {
      got.push(msg);
      // a message past the expected ones would show up within this grace
      if (got.length >= want && !settle) settle = setTimeout(finish, 3000);
    });
  });
}

function userProps(msg, c) {
  const out = {};
  for (const k of Object.keys(c.props)) out[k] = msg.properties[k];
  return out;
}

// RocketMQ's body CRC: zlib's CRC-32 of the stored body & 0x7fffffff
// (computed here: zlib.crc32 is missing from older Node releases)
function crc(buf) {
  let c = 0xffffffff;
  for (const b of buf) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ((c ^ 0xffffffff) & 0x7fffffff) >>> 0;
}

async function main([nameSrv, topic, group, first]) {
  tapNo = Number(first);
  const list = cases();
  const perrors = await produce(nameSrv, topic, list);
  const sent = list.filter(c => c.sent && c.sent.status === 'SEND_OK');
  const ids = new Set(sent.map(c => c.sent.msgId));
  check(sent.length === list.length && ids.size === list.length,
    `ali-ons Producer: ${sent.length} of ${list.length} SEND_OK with distinct msgIds`,
    list.map(c => `${c.name}: ${JSON.stringify(c.sent)}`).concat(perrors));
  const brokers = new Set(sent.map(c => c.sent.broker));
  check(brokers.size === 2, `the sends went to both masters (${[ ...brokers ].join(' ')})`);

  const got = await consume(nameSrv, topic, group, list, 90);
  const byId = new Map();
  for (const m of got) byId.set(m.msgId, (byId.get(m.msgId) || []).concat(m));
  const expected = list.filter(c => c.tag !== 'TagOther');
  const bodies = [];
  const meta = [];
  const flags = [];
  for (const c of expected) {
    const ms = byId.get(c.sent.msgId) || [];
    if (ms.length !== 1) {
      bodies.push(`${c.name}: ${c.sent.msgId} consumed ${ms.length} times`);
      continue;
    }
    const m = ms[0];
    if (!Buffer.isBuffer(m.body) || !m.body.equals(c.body)) {
      bodies.push(`${c.name}: body of ${m.body ? m.body.length : 0} B differs from the ${c.body.length} B sent`);
    }
    const keys = c.keys.join(' ');
    if (m.tags !== c.tag || m.keys !== keys || m.topic !== topic ||
        JSON.stringify(userProps(m, c)) !== JSON.stringify(c.props)) {
      meta.push(`${c.name}: topic ${m.topic} tag ${m.tags} keys ${m.keys} props ${JSON.stringify(userProps(m, c))}`);
    }
    const compressed = c.body.length >= COMPRESS_OVER;
    const wire = compressed ? zlib.deflateSync(c.body) : c.body;
    if (((m.sysFlag & 1) === 1) !== compressed || m.bodyCRC !== crc(wire) ||
        m.queueId !== Number(c.sent.queueId)) {
      flags.push(`${c.name}: sysFlag ${m.sysFlag} bodyCRC ${m.bodyCRC} (want ${crc(wire)}) queue ${m.queueId}`);
    }
  }
  check(bodies.length === 0, `ali-ons Consumer got each of the ${expected.length} messages once, ` +
    'under its send msgId, body identical byte for byte', bodies);
  check(meta.length === 0, 'topic, tag, keys and user properties identical', meta);
  check(flags.length === 0, `bodies of ${COMPRESS_OVER} B and more stored zlib-compressed (sysFlag bit 0, ` +
    'body CRC of the deflated bytes sent), smaller ones plain', flags);
  const other = list.find(c => c.tag === 'TagOther');
  check(!byId.has(other.sent.msgId) && got.length === expected.length,
    `a message of an unsubscribed tag is not delivered (${got.length} delivered)`);
  check(got.errors.length === 0, 'the consumer reported no error (a new group reads offset 0 of a young queue, ' +
    'as from RocketMQ\'s broker)', got.errors.slice(0, 10));
  return !failed;
}

main(process.argv.slice(2)).then(ok => process.exit(ok ? 0 : 1), err => {
  console.log(`not ok ${tapNo} - roundtrip: ${err.stack.split('\n')[0]}`);
  process.exit(1);
});
