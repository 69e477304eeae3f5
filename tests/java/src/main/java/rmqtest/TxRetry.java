/* TxRetry: the unmodified RocketMQ 4.9 Java client's transactions, delay
 * levels, retries and dead letters against an rmq name server and broker,
 * for tests/java/run_tx_retry_test.sh. One scenario per run:
 *
 *   tx NS TOPIC N SECONDS   a TransactionMQProducer sends N messages; the
 *                           local transaction of message i commits (i % 4
 *                           == 0), rolls back (1) or answers UNKNOW (2, 3),
 *                           and the check-back commits 2 and rolls back 3;
 *                           a push consumer of the topic runs meanwhile.
 *                           Prints "TXSENT <uniqId> <sendStatus> <kind>",
 *                           "CHECK <uniqId> <topic> <kind>" per check-back and
 *                           "RECV <uniqId> <kind>" per delivery, until
 *                           every check-back commit arrived or SECONDS
 *                           passed, then 5 s more to catch late deliveries.
 *   delay NS TOPIC          one message with delay level 2 (5 s) and one
 *                           without; prints "DELAY <kind> <ms>" with the
 *                           time from send to delivery of each.
 *   retry NS TOPIC GROUP N SECONDS
 *                           N messages whose push consumer (maxReconsumeTimes
 *                           2) always answers RECONSUME_LATER; prints
 *                           "ATTEMPT <uniqId> <reconsumeTimes> <epoch ms>"
 *                           per delivery; a second consumer reads
 *                           %DLQ%GROUP and prints "DLQ <uniqId>
 *                           <reconsumeTimes> <RETRY_TOPIC> <body>", until
 *                           N dead letters arrived or SECONDS passed. */
package rmqtest;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;

public final class TxRetry {
    private static final String[] KINDS = {"commit", "rollback", "check-commit", "check-rollback"};
    /* Route look-ups at start fail the start past this; the test machines are loaded. */
    private static final int CLIENT_API_TIMEOUT_MS = 15000;

    private TxRetry() {
    }

    public static void main(String[] args) {
        try {
            switch (args[0]) {
                case "tx":
                    tx(args[1], args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]));
                    break;
                case "delay":
                    delay(args[1], args[2]);
                    break;
                default:
                    retry(args[1], args[2], args[3], Integer.parseInt(args[4]), Integer.parseInt(args[5]));
                    break;
            }
        } catch (Throwable e) {
            e.printStackTrace();
            System.exit(2);      /* the clients' threads would keep the JVM up */
        }
        System.exit(0);
    }

    private static void say(String line) {
        synchronized (System.out) {
            System.out.println(line);
        }
    }

    private static DefaultMQPushConsumer consumer(String ns, String group, String topic) throws Exception {
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group);
        c.setNamesrvAddr(ns);
        c.setInstanceName(group + "-" + ProcessHandle.current().pid());
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setPollNameServerInterval(1000);
        c.setMqClientApiTimeout(CLIENT_API_TIMEOUT_MS);
        c.setPersistConsumerOffsetInterval(1000);
        c.subscribe(topic, "*");
        return c;
    }

    private static DefaultMQProducer producer(DefaultMQProducer p, String ns) throws Exception {
        p.setNamesrvAddr(ns);
        p.setInstanceName(p.getProducerGroup() + "-" + ProcessHandle.current().pid());
        p.setSendMsgTimeout(10000);
        p.setPollNameServerInterval(1000);
        p.setMqClientApiTimeout(CLIENT_API_TIMEOUT_MS);
        p.start();
        return p;
    }

    private static void waitFor(java.util.function.BooleanSupplier done, int seconds) throws InterruptedException {
        long deadline = System.currentTimeMillis() + seconds * 1000L;
        while (!done.getAsBoolean() && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
        }
    }

    private static void tx(String ns, String topic, int n, int seconds) throws Exception {
        Set<String> checkCommitted = ConcurrentHashMap.newKeySet();
        Set<String> received = ConcurrentHashMap.newKeySet();
        DefaultMQPushConsumer c = consumer(ns, "rmq_java_tx_consumer", topic);
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                say("RECV " + m.getMsgId() + " " + m.getUserProperty("kind"));
                received.add(m.getMsgId());
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();

        TransactionMQProducer p = new TransactionMQProducer("rmq_java_tx_producer");
        p.setTransactionListener(new TransactionListener() {
            @Override
            public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
                switch (msg.getUserProperty("kind")) {
                    case "commit":
                        return LocalTransactionState.COMMIT_MESSAGE;
                    case "rollback":
                        return LocalTransactionState.ROLLBACK_MESSAGE;
                    default:
                        return LocalTransactionState.UNKNOW;
                }
            }

            @Override
            public LocalTransactionState checkLocalTransaction(MessageExt msg) {
                String kind = msg.getUserProperty("kind");
                String id = msg.getProperty(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX);
                say("CHECK " + id + " " + msg.getTopic() + " " + kind);
                if (kind.equals("check-commit")) {
                    checkCommitted.add(id);
                    return LocalTransactionState.COMMIT_MESSAGE;
                }
                return LocalTransactionState.ROLLBACK_MESSAGE;
            }
        });
        producer(p, ns);
        int checkCommits = 0;
        for (int i = 0; i < n; i++) {
            String kind = KINDS[i % KINDS.length];
            Message m = new Message(topic, "TagTx", ("tx-" + i).getBytes(StandardCharsets.UTF_8));
            m.putUserProperty("kind", kind);
            SendResult r = p.sendMessageInTransaction(m, null);
            say("TXSENT " + r.getMsgId() + " " + r.getSendStatus() + " " + kind);
            if (kind.equals("check-commit")) {
                checkCommits++;
            }
        }
        int expected = checkCommits;
        waitFor(() -> checkCommitted.size() >= expected, seconds);
        Thread.sleep(5000);
        p.shutdown();
        c.shutdown();
        say("DONE checked " + checkCommitted.size() + " received " + received.size());
    }

    private static void delay(String ns, String topic) throws Exception {
        Map<String, Long> sentAt = new ConcurrentHashMap<>();
        Set<String> got = ConcurrentHashMap.newKeySet();
        DefaultMQPushConsumer c = consumer(ns, "rmq_java_delay_consumer", topic);
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            long now = System.currentTimeMillis();
            for (MessageExt m : msgs) {
                String kind = new String(m.getBody(), StandardCharsets.UTF_8);
                Long at = sentAt.get(kind);
                if (at != null && got.add(kind)) {
                    say("DELAY " + kind + " " + (now - at));
                }
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        Thread.sleep(3000);          /* the consumer owns its queues before the sends */
        DefaultMQProducer p = producer(new DefaultMQProducer("rmq_java_delay_producer"), ns);
        for (String kind : new String[] {"level2", "none"}) {
            Message m = new Message(topic, "TagD", kind.getBytes(StandardCharsets.UTF_8));
            if (kind.equals("level2")) {
                m.setDelayTimeLevel(2);
            }
            sentAt.put(kind, System.currentTimeMillis());
            SendResult r = p.send(m);
            say("SENT " + r.getMsgId() + " " + r.getSendStatus() + " " + kind);
        }
        waitFor(() -> got.size() >= 2, 60);
        p.shutdown();
        c.shutdown();
    }

    private static void retry(String ns, String topic, String group, int n, int seconds) throws Exception {
        Set<String> dead = ConcurrentHashMap.newKeySet();
        DefaultMQPushConsumer c = consumer(ns, group, topic);
        c.setMaxReconsumeTimes(2);
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            long now = System.currentTimeMillis();
            for (MessageExt m : msgs) {
                say("ATTEMPT " + m.getMsgId() + " " + m.getReconsumeTimes() + " " + now);
            }
            return ConsumeConcurrentlyStatus.RECONSUME_LATER;
        });
        c.start();
        DefaultMQPushConsumer d = consumer(ns, group + "_dlq", MixAll.getDLQTopic(group));
        d.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                say("DLQ " + m.getMsgId() + " " + m.getReconsumeTimes() + " "
                    + m.getProperty(MessageConst.PROPERTY_RETRY_TOPIC) + " "
                    + new String(m.getBody(), StandardCharsets.UTF_8));
                dead.add(m.getMsgId());
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        d.start();
        Thread.sleep(3000);
        DefaultMQProducer p = producer(new DefaultMQProducer("rmq_java_retry_producer"), ns);
        for (int i = 0; i < n; i++) {
            SendResult r = p.send(new Message(topic, "TagR", ("fail-" + i).getBytes(StandardCharsets.UTF_8)));
            say("SENT " + r.getMsgId() + " " + r.getSendStatus() + " fail-" + i);
        }
        waitFor(() -> dead.size() >= n, seconds);
        Thread.sleep(3000);
        p.shutdown();
        c.shutdown();
        d.shutdown();
        say("DONE dead " + dead.size());
    }
}
