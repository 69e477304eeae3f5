/* Failover: the unmodified RocketMQ 4.9 Java client's producers and push
 * consumers through a kill -9 of a master, for
 * tests/java/run_failover_test.sh. One role per run:
 *
 *   produce NS TOPIC SECONDS STOPFILE
 *                           two producer threads sending sync messages
 *                           (body "p<thread>-<i>") until SECONDS passed or
 *                           STOPFILE exists; prints "SENT <uniqId> <status>
 *                           <brokerName> <body>" per acknowledged send and
 *                           "FAIL <body> <exception>" per send that failed
 *                           after the client's retries.
 *   consume NS TOPIC GROUP ACKED SECONDS
 *                           a push consumer (CONSUME_FROM_FIRST_OFFSET) that
 *                           prints "RECV <uniqId> <body>" per delivery until
 *                           the file ACKED (one acknowledged uniqId a line,
 *                           written once the producers are done) exists and
 *                           every id in it arrived, or SECONDS passed; then
 *                           "DONE <distinct ids received>".
 * Both poll the name server every second, so that a dead master leaves
 * their routes quickly. */
package rmqtest;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

public final class Failover {
    /* A name server call's timeout: a cold JVM on a loaded host may need
     * more than the client's 3 s default before its first connection is up. */
    private static final int CLIENT_API_TIMEOUT_MS = 30000;
    private static final int SEND_TIMEOUT_MS = 10000;
    private static final int PRODUCER_THREADS = 2;

    private Failover() {
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("produce")) {
            produce(args[1], args[2], Integer.parseInt(args[3]), Paths.get(args[4]));
        } else {
            consume(args[1], args[2], args[3], Paths.get(args[4]), Integer.parseInt(args[5]));
        }
        System.exit(0);
    }

    /* One producer thread's loop: sync sends until the deadline or the stop file. */
    private static void sendLoop(DefaultMQProducer p, String topic, int thread, long deadline, Path stop) {
        for (int i = 0; System.currentTimeMillis() < deadline && !Files.exists(stop); i++) {
            String body = "p" + thread + "-" + i;
            try {
                SendResult r = p.send(new Message(topic, "TagF", body.getBytes(StandardCharsets.UTF_8)));
                System.out.println("SENT " + r.getMsgId() + " " + r.getSendStatus() + " "
                    + r.getMessageQueue().getBrokerName() + " " + body);
            } catch (Exception e) {
                System.out.println("FAIL " + body + " " + e.getClass().getSimpleName());
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private static void produce(String ns, String topic, int seconds, Path stop) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer("rmq_failover_producer");
        p.setNamesrvAddr(ns);
        p.setInstanceName("failover-producer");
        p.setSendMsgTimeout(SEND_TIMEOUT_MS);
        p.setMqClientApiTimeout(CLIENT_API_TIMEOUT_MS);
        p.setPollNameServerInterval(1000);
        p.setRetryTimesWhenSendFailed(4);
        p.setSendLatencyFaultEnable(true);
        p.start();
        long deadline = System.currentTimeMillis() + seconds * 1000L;
        Thread[] threads = new Thread[PRODUCER_THREADS];
        for (int t = 0; t < threads.length; t++) {
            final int thread = t;
            threads[t] = new Thread(() -> sendLoop(p, topic, thread, deadline, stop));
            threads[t].start();
        }
        for (Thread t : threads) {
            t.join();
        }
        p.shutdown();
    }

    /* The ids of ACKED once the file exists (it is renamed into place whole), else null. */
    private static Set<String> acked(Path file) throws Exception {
        if (!Files.exists(file)) {
            return null;
        }
        Set<String> ids = new HashSet<>();
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            if (!line.isEmpty()) {
                ids.add(line);
            }
        }
        return ids;
    }

    private static void consume(String ns, String topic, String group, Path ackedFile, int seconds)
        throws Exception {
        Set<String> seen = ConcurrentHashMap.newKeySet();
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group);
        c.setNamesrvAddr(ns);
        c.setInstanceName("failover-" + group);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setMqClientApiTimeout(CLIENT_API_TIMEOUT_MS);
        c.setPollNameServerInterval(1000);
        c.setPersistConsumerOffsetInterval(1000);
        c.subscribe(topic, "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                System.out.println("RECV " + m.getMsgId() + " " + new String(m.getBody(), StandardCharsets.UTF_8));
                seen.add(m.getMsgId());
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        long deadline = System.currentTimeMillis() + seconds * 1000L;
        Set<String> want = null;
        while (System.currentTimeMillis() < deadline) {
            if (want == null) {
                want = acked(ackedFile);
            }
            if (want != null && seen.containsAll(want)) {
                break;
            }
            Thread.sleep(200);
        }
        c.shutdown();
        System.out.println("DONE " + seen.size());
    }
}
