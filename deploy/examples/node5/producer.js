// producer.js: sends COUNT messages of TOPIC with a tag and a key through
// the endpoints ENDPOINTS (a name server's or a broker's "host:port") with
// rocketmq-client-nodejs, RocketMQ 5's gRPC client, the way any of its
// applications does; prints one line per acknowledged message. With
// RMQ_ACCESS_KEY and RMQ_SECRET_KEY set it signs as that ACL account.
//
//   node producer.js ENDPOINTS TOPIC COUNT
'use strict';

const { Producer } = require('rocketmq-client-nodejs');
const credentials = require('./credentials');

async function main([endpoints, topic, count]) {
  const producer = new Producer({ endpoints, namespace: '', topics: [topic], sessionCredentials: credentials() });
  await producer.startup();
  for (let i = 0; i < Number(count); i++) {
    const r = await producer.send({ topic, tag: 'TagA', keys: [`order-${i}`], body: Buffer.from(`hello ${i}`) });
    console.log(`SENT ${r.messageId} hello ${i}`);
  }
  await producer.shutdown();
}

main(process.argv.slice(2)).then(() => process.exit(0), err => {
  console.error(err);
  process.exit(1);
});
