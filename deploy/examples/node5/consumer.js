// consumer.js: a push consumer of group GROUP on TOPIC (tag TagA) through
// the endpoints ENDPOINTS with rocketmq-client-nodejs, RocketMQ 5's gRPC
// client; prints each message (id, key, body) and exits once COUNT came, or
// after SECONDS. With RMQ_ACCESS_KEY and RMQ_SECRET_KEY set it signs as that
// ACL account.
//
//   node consumer.js ENDPOINTS TOPIC GROUP COUNT SECONDS
'use strict';

const { PushConsumer, ConsumeResult, FilterExpression } = require('rocketmq-client-nodejs');
const credentials = require('./credentials');

async function main([endpoints, topic, group, count, seconds]) {
  const seen = new Set();
  let done;
  const finished = new Promise(resolve => { done = resolve; });
  const consumer = new PushConsumer({
    endpoints, namespace: '', consumerGroup: group, sessionCredentials: credentials(),
    subscriptions: new Map([[topic, new FilterExpression('TagA')]]),
    messageListener: {
      consume(m) {
        console.log(`RECV ${m.messageId} ${m.keys.join(',')} ${m.body.toString()}`);
        seen.add(m.messageId);
        if (seen.size >= Number(count)) done();
        return ConsumeResult.SUCCESS;
      },
    },
  });
  await consumer.startup();
  const timer = setTimeout(done, Number(seconds) * 1000);
  await finished;
  clearTimeout(timer);
  await consumer.shutdown();
  console.log(`DONE ${seen.size}`);
}

main(process.argv.slice(2)).then(() => process.exit(0), err => {
  console.error(err);
  process.exit(1);
});
