// producer.js: sends COUNT messages of TOPIC with a tag and a key through the
// name servers NAMESRV ("host:port;host:port") with ali-ons, the way any
// ali-ons application does; prints one line per acknowledged message.
//
//   node producer.js NAMESRV TOPIC COUNT
'use strict';

const httpclient = require('urllib');
const { Producer, Message } = require('ali-ons');

async function main([nameSrv, topic, count]) {
  const producer = new Producer({
    httpclient, // ali-ons asks for one; with nameSrv it never calls it
    nameSrv: nameSrv.split(';'),
    producerGroup: 'example_producer',
  });
  producer.on('error', err => console.error(err.message));
  await producer.ready();
  for (let i = 0; i < Number(count); i++) {
    const msg = new Message(topic, 'TagA', `hello ${i}`);
    msg.keys = [`order-${i}`];
    const r = await producer.send(msg);
    console.log(`SENT ${r.msgId} ${r.sendStatus} ${r.messageQueue.brokerName} hello ${i}`);
  }
  await producer.close();
}

main(process.argv.slice(2)).then(() => process.exit(0), err => {
  console.error(err);
  process.exit(1);
});
