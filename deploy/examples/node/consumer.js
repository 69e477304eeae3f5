// consumer.js: an ali-ons push consumer of GROUP on TOPIC (tag TagA) through
// NAMESRV; prints each message it gets and stops after COUNT distinct ones
// or SECONDS seconds.
//
//   node consumer.js NAMESRV TOPIC GROUP COUNT SECONDS
'use strict';

const httpclient = require('urllib');
const { Consumer } = require('ali-ons');

async function main([nameSrv, topic, group, count, seconds]) {
  const consumer = new Consumer({
    httpclient, // ali-ons asks for one; with nameSrv it never calls it
    nameSrv: nameSrv.split(';'),
    consumerGroup: group,
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET', // a new group starts at the oldest message
  });
  consumer.on('error', err => console.error(err.message));
  const seen = new Set();
  const all = new Promise(resolve => {
    consumer.subscribe(topic, 'TagA', async msg => {
      console.log(`RECV ${msg.msgId} ${msg.keys} ${msg.body.toString()}`);
      seen.add(msg.msgId);
      if (seen.size >= Number(count)) resolve(true);
    });
  });
  await consumer.ready();
  const timeout = new Promise(resolve => setTimeout(resolve, Number(seconds) * 1000, false));
  const done = await Promise.race([ all, timeout ]);
  await consumer.close();
  console.log(`${done ? 'DONE' : 'TIMEOUT'} ${seen.size}`);
  return done;
}

main(process.argv.slice(2)).then(done => process.exit(done ? 0 : 1), err => {
  console.error(err);
  process.exit(1);
});
