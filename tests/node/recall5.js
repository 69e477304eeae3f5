'use strict';
// tests/node/recall5.js: the unmodified RocketMQ 5 Node client
// (rocketmq-client-nodejs 1.0.8, gRPC) recalls a timer message
// (Producer.recallMessage, RocketMQ 5.3's RecallMessage) against an rmq
// broker. "send" mode: a normal message gets no recall handle, a delayed
// one does; recalling it succeeds with its message id, twice; a bad handle
// and one naming a broker no route has are refused; prints "HANDLE <h>" of a second delayed message it keeps.
// "consume HANDLE" mode (run after the broker restarted): the kept message
// arrives and the recalled one never does; recalling the kept one after
// its delivery is refused, and so is the unknown broker's handle again
// (the consumer's access point: the broker's endpoint on one broker). Prints one "OK name detail" or "FAIL name
// detail" line per check.
// usage: node recall5.js ENDPOINTS TOPIC send | consume HANDLE
const { Producer, SimpleConsumer, FilterExpression } = require('rocketmq-client-nodejs');

const [ endpoints, topic, mode, keptHandle ] = process.argv.slice(2);
const DELAY_MS = 10000;
const quiet = { info() {}, warn() {}, error() {}, debug() {} };
let failures = 0;

function report(ok, name, detail) {
  if (!ok) failures++;
  console.log(`${ok ? 'OK' : 'FAIL'} ${name} ${detail}`);
}

function options(extra) {
  return { endpoints, namespace: '', logger: quiet, requestTimeout: 5000, ...extra };
}

// recallError(producer, handle): the error text of a recall, '' when it succeeded.
async function recallError(producer, handle) {
  try {
    await producer.recallMessage(topic, handle);
    return '';
  } catch (e) {
    return String(e && e.message || e);
  }
}

// unknownBrokerRefused(producer): a well-formed handle naming a broker no
// route has is refused by the access point that would forward it.
async function unknownBrokerRefused(producer) {
  const handle = Buffer.from(`v1 ${topic} no-such-broker ${Date.now() + 60000} 0A0000000000000000000000000000AB`)
    .toString('base64url');
  const why = await recallError(producer, handle);
  report(why.includes('broker no-such-broker has no master in the route'), 'recall-unknown-broker-refused',
    `a handle naming no-such-broker: ${why || 'OK'}`);
}

async function send(producer) {
  const normal = await producer.send({ topic, tag: 'N', body: Buffer.from('normal') });
  report(!normal.recallHandle, 'normal-no-handle', `a normal message's handle: '${normal.recallHandle || ''}'`);
  const recalled = await producer.send({ topic, tag: 'T', delay: DELAY_MS, body: Buffer.from('recalled') });
  const kept = await producer.send({ topic, tag: 'T', delay: DELAY_MS, body: Buffer.from('kept') });
  const raw = Buffer.from(recalled.recallHandle || '', 'base64url').toString();
  report(raw.startsWith(`v1 ${topic} `) && raw.endsWith(` ${recalled.messageId}`), 'timer-handle',
    `a delayed message's handle reads '${raw}'`);
  const receipt = await producer.recallMessage(topic, recalled.recallHandle).catch(e => ({ error: e }));
  report(receipt.messageId === recalled.messageId, 'recall-ok',
    `recalled: ${receipt.messageId || receipt.error} (sent ${recalled.messageId})`);
  const again = await recallError(producer, recalled.recallHandle);
  report(again === '', 'recall-twice-ok', `recalled again: ${again || 'OK'}`);
  const bad = await recallError(producer, Buffer.from('not a handle').toString('base64url'));
  report(bad.includes('recall handle is invalid'), 'recall-bad-handle-refused', `a bad handle: ${bad}`);
  await unknownBrokerRefused(producer);
  console.log(`HANDLE ${kept.recallHandle}`);
}

async function consume(producer) {
  const c = new SimpleConsumer(options({
    consumerGroup: 'recall5_consumer',
    subscriptions: new Map([[ topic, new FilterExpression('T') ]]),
    awaitDuration: 2000,
  }));
  await c.startup();
  const bodies = [];
  let keptAt = 0;
  const end = Date.now() + DELAY_MS + 20000;
  while (Date.now() < end && (!keptAt || Date.now() < keptAt + 3000)) {
    for (const m of await c.receive(16, 20000)) {
      bodies.push(m.body.toString());
      if (m.body.toString() === 'kept') keptAt = Date.now();
      await c.ack(m);
    }
  }
  await c.shutdown();
  report(bodies.length === 1 && bodies[0] === 'kept', 'recalled-never-delivered', `received [${bodies}]`);
  const late = await recallError(producer, keptHandle);
  report(late.includes('timestamp invalid'), 'recall-after-delivery-refused', `recalled after delivery: ${late || 'OK'}`);
  await unknownBrokerRefused(producer);
}

async function main() {
  const producer = new Producer(options({ topics: [ topic ] }));
  await producer.startup();
  await (mode === 'send' ? send(producer) : consume(producer));
  await producer.shutdown();
}

main().then(() => process.exit(failures ? 1 : 0), e => {
  console.log(`FAIL run ${e && e.stack || e}`);
  process.exit(2);
});
