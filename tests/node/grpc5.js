'use strict';
// tests/node/grpc5.js: the unmodified RocketMQ 5 Node client
// (rocketmq-client-nodejs, gRPC) against rmq: a Producer sends normal
// messages (tags, keys, user properties), FIFO messages (message groups),
// a delayed message (and three recalled) and transactional ones (a commit
// and a rollback); a SimpleConsumer receives and acks them, a tag filter
// selects, an unacked message comes again with delivery attempt 2; a
// PushConsumer consumes a topic with one failure redelivered. With
// ACCESS_KEY and SECRET set the clients sign their calls; a client with a
// wrong secret is refused.
// Prints one "OK name detail" or "FAIL name detail" line per check.
// usage: node grpc5.js ENDPOINTS PREFIX [ACCESS_KEY SECRET]
const { Producer, SimpleConsumer, PushConsumer, ConsumeResult, FilterExpression } = require('rocketmq-client-nodejs');
const { TransactionResolution } = require('rocketmq-client-nodejs/proto/apache/rocketmq/v2/definition_pb');

const [ endpoints, prefix, accessKey, accessSecret ] = process.argv.slice(2);
const topics = {
  normal: `${prefix}Normal`, fifo: `${prefix}Fifo`, delay: `${prefix}Delay`,
  tx: `${prefix}Tx`, push: `${prefix}Push`,
};
const NORMAL = 20;
const GROUPS = [ 'g1', 'g2', 'g3' ];
const PER_GROUP = 5;
const PUSH = 12;
const DELAY_MS = 3000;
// The client sends in turn to each broker of the route, so three recalled
// messages name every master of a cluster of up to three: the access point
// forwards the recalls of the others.
const RECALLED = 3;
const quiet = { info() {}, warn() {}, error() {}, debug() {} };
const credentials = accessKey ? { accessKey, accessSecret } : undefined;
let failures = 0;

function report(ok, name, detail) {
  if (!ok) failures++;
  console.log(`${ok ? 'OK' : 'FAIL'} ${name} ${detail}`);
}

function options(extra) {
  return { endpoints, namespace: '', logger: quiet, sessionCredentials: credentials, requestTimeout: 5000, ...extra };
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

// receiveAll(consumer, want, ms): receives and acks until want messages
// came or ms passed; returns the message views.
async function receiveAll(consumer, want, ms) {
  const got = [];
  const end = Date.now() + ms;
  while (got.length < want && Date.now() < end) {
    const batch = await consumer.receive(16, 20000);
    for (const m of batch) {
      got.push(m);
      await consumer.ack(m);
    }
  }
  return got;
}

// receiveOne(consumer, wanted, ms): receives until a message wanted(m)
// comes (returned unacked) or ms passed; acks every other message.
async function receiveOne(consumer, wanted, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    for (const m of await consumer.receive(16, 20000)) {
      if (wanted(m)) return m;
      await consumer.ack(m);
    }
  }
  return undefined;
}

async function simpleConsumer(group, topic, filter) {
  const c = new SimpleConsumer(options({
    consumerGroup: `${prefix}_${group}`,
    subscriptions: new Map([[ topic, new FilterExpression(filter) ]]),
    awaitDuration: 2000,
  }));
  await c.startup();
  return c;
}

async function sendNormal(producer) {
  const sent = new Map();
  for (let i = 0; i < NORMAL; i++) {
    const receipt = await producer.send({
      topic: topics.normal, tag: i % 2 ? 'TagB' : 'TagA', keys: [ `key-${i}` ],
      properties: new Map([[ 'seq', String(i) ]]), body: Buffer.from(`normal-${i}`),
    });
    sent.set(receipt.messageId, i);
  }
  report(sent.size === NORMAL, 'send-normal', `${sent.size} of ${NORMAL} receipts with distinct message ids`);
  return sent;
}

async function sendFifo(producer) {
  const queues = new Map();
  for (let i = 0; i < PER_GROUP; i++) {
    for (const g of GROUPS) {
      const receipt = await producer.send({ topic: topics.fifo, messageGroup: g, body: Buffer.from(`${g}-${i}`) });
      const q = receipt.messageQueue.queueId;
      queues.set(g, (queues.get(g) || new Set()).add(q));
    }
  }
  const oneQueue = GROUPS.every(g => queues.get(g).size === 1);
  report(oneQueue, 'send-fifo', `each of ${GROUPS.length} message groups in one queue: `
    + GROUPS.map(g => `${g}=${[ ...queues.get(g) ]}`).join(' '));
}

// A commit is delivered, a rollback is not (checked by receiveTx).
async function sendTransactions(producer) {
  for (const [ body, end ] of [[ 'tx-commit', 'commit' ], [ 'tx-rollback', 'rollback' ]]) {
    const tx = producer.beginTransaction();
    await producer.send({ topic: topics.tx, body: Buffer.from(body) }, tx);
    await tx[end]();
  }
  report(true, 'send-tx', 'a transaction committed and one rolled back');
}

async function checkNormal(sent) {
  const c = await simpleConsumer('simple', topics.normal, '*');
  const got = await receiveAll(c, NORMAL, 20000);
  const intact = got.filter(m => {
    const i = sent.get(m.messageId);
    return i !== undefined && m.body.toString() === `normal-${i}` && m.tag === (i % 2 ? 'TagB' : 'TagA')
      && m.keys.includes(`key-${i}`) && m.properties.get('seq') === String(i);
  });
  const ids = new Set(got.map(m => m.messageId));
  report(intact.length === NORMAL && ids.size === NORMAL, 'simple-receive-ack',
    `${got.length} received and acked, ${intact.length} with body, tag, keys and property as sent`);
  const more = await c.receive(16, 20000);
  report(more.length === 0, 'simple-acked-gone', `${more.length} received again after the acks`);
  await c.shutdown();
}

async function checkTagFilter() {
  const c = await simpleConsumer('tagged', topics.normal, 'TagB');
  const got = await receiveAll(c, NORMAL / 2, 15000);
  const wrong = got.filter(m => m.tag !== 'TagB').length;
  report(got.length === NORMAL / 2 && wrong === 0, 'simple-tag-filter',
    `${got.length} received with filter TagB, ${wrong} of another tag`);
  await c.shutdown();
}

async function checkFifo() {
  const c = await simpleConsumer('fifo', topics.fifo, '*');
  const got = await receiveAll(c, GROUPS.length * PER_GROUP, 20000);
  const tagged = got.filter(m => m.body.toString().startsWith(`${m.messageGroup}-`)).length;
  report(got.length === GROUPS.length * PER_GROUP && tagged === got.length, 'simple-fifo',
    `${got.length} received, ${tagged} carrying the message group they were sent with`);
  await c.shutdown();
}

// The unacked message is hidden for its invisible time, then comes again
// with delivery attempt 2; changeInvisibleDuration gives a new handle.
async function checkRedelivery(producer) {
  const topic = topics.normal;
  const c = await simpleConsumer('redeliver', topic, '*');
  await producer.send({ topic, tag: 'TagA', body: Buffer.from('redeliver') });
  const first = await receiveOne(c, m => m.body.toString() === 'redeliver', 15000);
  if (!first) {
    report(false, 'simple-redelivered', 'the message never came');
    await c.shutdown();
    return;
  }
  await c.changeInvisibleDuration(first, 2000);
  const m = await receiveOne(c, v => v.messageId === first.messageId, 15000);
  report(m !== undefined && m.deliveryAttempt === 2, 'simple-redelivered',
    `first attempt ${first.deliveryAttempt}, again: ${m ? `attempt ${m.deliveryAttempt}` : 'never'}`);
  if (m) await c.ack(m);
  await c.shutdown();
}

async function checkDelay(producer) {
  const sentAt = Date.now();
  await producer.send({ topic: topics.delay, delay: DELAY_MS, body: Buffer.from('delayed') });
  const results = [];
  for (let i = 0; i < RECALLED; i++) {
    const sent = await producer.send({ topic: topics.delay, delay: DELAY_MS, body: Buffer.from('recalled') });
    const receipt = await producer.recallMessage(topics.delay, sent.recallHandle).catch(e => ({ error: e }));
    const broker = Buffer.from(sent.recallHandle || '', 'base64url').toString().split(' ')[2];
    results.push({ ok: receipt.messageId === sent.messageId, text: `${broker}: ${receipt.messageId || receipt.error}` });
  }
  report(results.every(r => r.ok), 'recall-signed', `recalled [${results.map(r => r.text).join('; ')}]`);
  const c = await simpleConsumer('delay', topics.delay, '*');
  const got = await receiveAll(c, 2, DELAY_MS + 5000);
  const after = Date.now() - sentAt;
  const bodies = got.map(m => m.body.toString());
  report(bodies.length === 1 && bodies[0] === 'delayed' && after >= DELAY_MS - 100, 'simple-delay',
    `received [${bodies}] ${after} ms after the send (delay ${DELAY_MS} ms)`);
  await c.shutdown();
}

async function checkTx() {
  const c = await simpleConsumer('tx', topics.tx, '*');
  const got = await receiveAll(c, 1, 8000);
  got.push(...await c.receive(16, 20000));                  /* the rollback, were it delivered */
  const bodies = got.map(m => m.body.toString()).sort();
  report(bodies.length === 1 && bodies[0] === 'tx-commit', 'simple-tx', `received [${bodies}]`);
  await c.shutdown();
}

async function checkPush(producer) {
  const counts = new Map();
  let failed = null;
  let failedAttempt = 0;
  const consumer = new PushConsumer(options({
    consumerGroup: `${prefix}_push`,
    subscriptions: new Map([[ topics.push, new FilterExpression('*') ]]),
    messageListener: {
      consume(m) {
        const body = m.body.toString();
        counts.set(body, (counts.get(body) || 0) + 1);
        if (failed === null) {
          failed = body;
          return ConsumeResult.FAILURE;
        }
        if (body === failed) failedAttempt = m.deliveryAttempt;
        return ConsumeResult.SUCCESS;
      },
    },
  }));
  await consumer.startup();
  for (let i = 0; i < PUSH; i++) await producer.send({ topic: topics.push, body: Buffer.from(`push-${i}`) });
  const end = Date.now() + 40000;
  while ((counts.size < PUSH || failedAttempt === 0) && Date.now() < end) await sleep(200);
  await sleep(1500);
  await consumer.shutdown();
  const twice = [ ...counts.entries() ].filter(([ body, n ]) => n !== 1 && body !== failed).length;
  report(counts.size === PUSH && twice === 0, 'push-consume', `${counts.size} of ${PUSH} consumed, ${twice} more than once`);
  report(failedAttempt === 2, 'push-failure-redelivered', `the failed message came again with attempt ${failedAttempt}`);
}

async function checkWrongSecret() {
  if (!credentials) return;
  const p = new Producer(options({ topics: [ topics.normal ], sessionCredentials: { accessKey, accessSecret: 'wrong' } }));
  let error = '';
  try {
    await p.startup();
    await p.send({ topic: topics.normal, body: Buffer.from('refused') });
  } catch (e) {
    error = String(e && e.message || e);
  }
  report(error !== '', 'acl-wrong-secret-refused', `a client signing with a wrong secret: ${error || 'sent'}`);
  await p.shutdown().catch(() => {});
}

async function main() {
  const checker = { check: async () => TransactionResolution.COMMIT };
  // one topic at startup: with several, the 1.0.8 client fetches the
  // others' routes after opening its Telemetry stream, and when the
  // Settings reply comes before it waits for one, it waits forever
  const producer = new Producer(options({ topics: [ topics.normal ], checker }));
  await producer.startup();
  report(true, 'producer-start', `started with endpoints ${endpoints}`);
  const sent = await sendNormal(producer);
  await sendFifo(producer);
  await sendTransactions(producer);
  await checkNormal(sent);
  await checkTagFilter();
  await checkFifo();
  await checkRedelivery(producer);
  await checkDelay(producer);
  await checkTx();
  await checkPush(producer);
  await checkWrongSecret();
  await producer.shutdown();
}

main().then(() => process.exit(failures ? 1 : 0), e => {
  console.log(`FAIL run ${e && e.stack || e}`);
  process.exit(2);
});
