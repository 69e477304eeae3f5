// tests/node/acl.js: the unmodified ali-ons client (npm) signing with
// accessKeyId / accessKeySecret against an rmq name server and broker with
// aclEnable=true. ali-ons signs RocketMQ ACL 1.0 (lib/channel.js):
// Base64(HmacSHA1(secret, the values of AccessKey, OnsChannel and every
// header field in key order, then the body)), sent as the extFields
// AccessKey, Signature and OnsChannel=ALIYUN. OnsChannel is an extField
// like any other, so it is signed and checked like one (RocketMQ's
// PlainAccessValidator signs every extField but Signature too).
//
// Each client gets its own instanceName: ali-ons shares one connection set
// (and the first client's credentials) per ip@instanceName.
//
//   node acl.js NAMESRV TOPIC FIRST
// Prints TAP lines numbered from FIRST; exits 1 when a check fails.
'use strict';

const httpclient = require('urllib');
const { Producer, Consumer, Message } = require('ali-ons');

const N = 10;
const APP = { accessKeyId: 'nodeapp', accessKeySecret: 'nodeapp-secret-1' };
const WRONG = { accessKeyId: 'nodeapp', accessKeySecret: 'not-the-secret' };
const READER = { accessKeyId: 'reader', accessKeySecret: 'reader-secret-1' };

let tapNo;
let failed = false;
function check(ok, what, detail) {
  console.log(`${ok ? 'ok' : 'not ok'} ${tapNo++} - ${what}`);
  if (!ok) {
    failed = true;
    for (const line of [].concat(detail || [])) console.log(`# ${line}`);
  }
}

function options(nameSrv, instanceName, account, extra) {
  return Object.assign({ httpclient, nameSrv: nameSrv.split(';'), instanceName }, account, extra);
}

// Sends bodies as account; returns { ids, error } (error: the message of
// the first send that threw).
async function produce(nameSrv, instanceName, account, topic, bodies) {
  const producer = new Producer(options(nameSrv, instanceName, account, { producerGroup: `${instanceName}_producer` }));
  const out = { ids: [], error: null };
  producer.on('error', err => { out.error = out.error || err.message; });
  try {
    await producer.ready();
    for (const body of bodies) {
      const r = await producer.send(new Message(topic, 'TagAcl', Buffer.from(body)));
      if (r.sendStatus === 'SEND_OK') out.ids.push(r.msgId);
    }
  } catch (err) {
    out.error = out.error || err.message;
  }
  await producer.close();
  return out;
}

// A push consumer of group as account for seconds (until want messages
// arrived, then 3 s more); returns the messages and the errors it emitted.
function consume(nameSrv, instanceName, account, topic, group, want, seconds) {
  const consumer = new Consumer(options(nameSrv, instanceName, account, {
    consumerGroup: group,
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
  }));
  const got = [];
  got.errors = [];
  return new Promise(resolve => {
    let settle;
    const finish = async () => {
      clearTimeout(timer);
      await consumer.close();
      resolve(got);
    };
    const timer = setTimeout(finish, seconds * 1000);
    consumer.on('error', err => {
      got.errors.push(err.message);
      if (want === 0 && !settle) settle = setTimeout(finish, 3000);
    });
    consumer.subscribe(topic, '*', async msg => {
      got.push(msg);
      if (want > 0 && got.length >= want && !settle) settle = setTimeout(finish, 3000);
    });
  });
}

async function main([nameSrv, topic, first]) {
  tapNo = Number(first);
  const bodies = Array.from({ length: N }, (_, i) => `acl body ${i} ✓`);

  const denied = await produce(nameSrv, 'reader', READER, topic, [ 'from a reader' ]);
  check(denied.ids.length === 0 && denied.error !== null,
    `account reader (SUB on ${topic}) cannot send: ${denied.error}`);

  const wrong = await produce(nameSrv, 'wrong', WRONG, topic, [ 'with a wrong secret' ]);
  check(wrong.ids.length === 0 && /signature of request code \d+ does not match/.test(wrong.error || ''),
    `a wrong secret is refused, the client told why: ${wrong.error}`);

  const sent = await produce(nameSrv, 'app', APP, topic, bodies);
  check(sent.ids.length === N && sent.error === null, `account nodeapp: ${sent.ids.length} of ${N} SEND_OK`,
    sent.error ? [ sent.error ] : []);

  const got = await consume(nameSrv, 'app', APP, topic, 'node_acl_consumer', N, 60);
  const texts = got.map(m => m.body.toString()).sort();
  check(JSON.stringify(texts) === JSON.stringify([ ...bodies ].sort()) &&
    got.every(m => sent.ids.includes(m.msgId)),
  `account nodeapp consumed exactly the ${N} messages it sent, bodies identical (nothing from the refused senders)`,
  texts.slice(0, 12));
  check(got.errors.length === 0, 'the signed consumer reported no error', got.errors.slice(0, 10));

  const bad = await consume(nameSrv, 'wrongc', WRONG, topic, 'node_acl_consumer', 0, 30);
  check(bad.length === 0 && bad.errors.some(e => /signature of request code \d+ does not match/.test(e)),
    'a consumer with a wrong secret gets nothing and an error saying its signature does not match',
    bad.errors.slice(0, 5));
  return !failed;
}

main(process.argv.slice(2)).then(ok => process.exit(ok ? 0 : 1), err => {
  console.log(`not ok ${tapNo} - acl: ${err.stack.split('\n')[0]}`);
  process.exit(1);
});
