package rmqtest;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.apis.producer.SendReceipt;
import org.apache.rocketmq.client.apis.producer.Transaction;
import org.apache.rocketmq.client.apis.producer.TransactionResolution;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * The unmodified RocketMQ 5 Java client (rocketmq-client-java 5.0.8, gRPC) as
 * a producer against rmq, with ENDPOINTS as its access point (the name server
 * or a broker): normal messages with tags and keys, FIFO messages of three
 * message groups, messages delayed by a delivery timestamp, and two
 * transactional messages, one committed, one rolled back and one left open,
 * which the broker's check-back (RecoverOrphanedTransactionCommand on the
 * Telemetry stream) resolves through the producer's checker. What was stored
 * is read back with the 4.9 remoting client (a lite pull consumer on NAMESRV)
 * and compared by message id. Prints "OK name ..." or "FAIL name ..." per
 * check for run_grpc_produce_test.sh.
 *
 * usage: GrpcProduce ENDPOINTS NAMESRV NORMAL_TOPIC FIFO_TOPIC DELAY_TOPIC TX_TOPIC GROUP
 */
public final class GrpcProduce {
    static final int NORMAL = 20, FIFO_GROUPS = 3, FIFO_EACH = 10, DELAYED = 3;
    static final long DELAY_MS = 4000;

    static boolean allOk = true;

    static void report(boolean ok, String name, String what) {
        System.out.println((ok ? "OK " : "FAIL ") + name + " " + what);
        allOk &= ok;
    }

    static Message message(ClientServiceProvider p, String topic, String body) {
        return p.newMessageBuilder().setTopic(topic).setTag("TagA").setKeys("key-" + body)
            .setBody(body.getBytes(StandardCharsets.UTF_8)).build();
    }

    public static void main(String[] args) throws Exception {
        String endpoints = args[0], namesrv = args[1], normalTopic = args[2], fifoTopic = args[3],
            delayTopic = args[4], txTopic = args[5], group = args[6];
        ClientServiceProvider provider = ClientServiceProvider.loadService();
        ClientConfiguration cfg = ClientConfiguration.newBuilder().setEndpoints(endpoints).enableSsl(false)
            .setRequestTimeout(Duration.ofSeconds(5)).build();

        Map<String, String> normal = new HashMap<>();     // message id -> body
        Map<String, List<String>> fifo = new HashMap<>(); // message group -> bodies in send order
        Map<String, Long> delayed = new HashMap<>();      // message id -> delivery time
        String committed, rolledBack, checked;
        long started = System.currentTimeMillis();
        try (Producer producer = provider.newProducerBuilder().setClientConfiguration(cfg)
                 .setTopics(normalTopic, fifoTopic, delayTopic).build()) {
            report(true, "start", "producer started in " + (System.currentTimeMillis() - started) + " ms");
            for (int i = 0; i < NORMAL; i++) {
                String body = group + "-n" + i;
                SendReceipt r = producer.send(message(provider, normalTopic, body));
                normal.put(r.getMessageId().toString(), body);
            }
            report(normal.size() == NORMAL, "send-normal", normal.size() + " normal messages sent");
            int fifoSent = 0;
            for (int i = 0; i < FIFO_EACH; i++) {
                for (int g = 0; g < FIFO_GROUPS; g++) {
                    String mg = group + "-g" + g, body = mg + "-" + i;
                    producer.send(provider.newMessageBuilder().setTopic(fifoTopic).setMessageGroup(mg)
                        .setBody(body.getBytes(StandardCharsets.UTF_8)).build());
                    fifo.computeIfAbsent(mg, k -> new ArrayList<>()).add(body);
                    fifoSent++;
                }
            }
            report(fifoSent == FIFO_GROUPS * FIFO_EACH, "send-fifo", fifoSent + " FIFO messages sent");
            for (int i = 0; i < DELAYED; i++) {
                long at = System.currentTimeMillis() + DELAY_MS;
                SendReceipt r = producer.send(provider.newMessageBuilder().setTopic(delayTopic)
                    .setDeliveryTimestamp(at).setBody((group + "-d" + i).getBytes(StandardCharsets.UTF_8)).build());
                delayed.put(r.getMessageId().toString(), at);
            }
            report(delayed.size() == DELAYED, "send-delay", delayed.size() + " delayed messages sent");
        }
        Set<String> checkedIds = java.util.concurrent.ConcurrentHashMap.newKeySet();
        try (Producer tx = provider.newProducerBuilder().setClientConfiguration(cfg).setTopics(txTopic)
                 .setTransactionChecker(view -> {
                     checkedIds.add(view.getMessageId().toString());
                     return TransactionResolution.COMMIT;
                 }).build()) {
            Transaction t1 = tx.beginTransaction();
            committed = tx.send(message(provider, txTopic, group + "-commit"), t1).getMessageId().toString();
            t1.commit();
            Transaction t2 = tx.beginTransaction();
            rolledBack = tx.send(message(provider, txTopic, group + "-rollback"), t2).getMessageId().toString();
            t2.rollback();
            Transaction t3 = tx.beginTransaction();
            checked = tx.send(message(provider, txTopic, group + "-checked"), t3).getMessageId().toString();
            report(true, "send-tx", "three transactional messages sent: one committed, one rolled back, one left open");
            long until = System.currentTimeMillis() + 60000;
            while (!checkedIds.contains(checked) && System.currentTimeMillis() < until)
                Thread.sleep(200);
            report(checkedIds.contains(checked), "tx-check",
                   "the broker asked the producer's checker about the open transaction: " + checkedIds.contains(checked));
            Thread.sleep(500);       // the checker's EndTransaction is on its way
        }
        verify(namesrv, group, normalTopic, fifoTopic, delayTopic, txTopic, normal, fifo, delayed, committed,
               rolledBack, checked);
        System.exit(allOk ? 0 : 1);
    }

    /** Reads the four topics with the 4.9 remoting client and checks what the producer stored. */
    static void verify(String namesrv, String group, String normalTopic, String fifoTopic, String delayTopic,
                       String txTopic, Map<String, String> normal, Map<String, List<String>> fifo,
                       Map<String, Long> delayed, String committed, String rolledBack, String checked)
        throws Exception {
        DefaultLitePullConsumer c = new DefaultLitePullConsumer(group + "_reader");
        c.setNamesrvAddr(namesrv);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setPollTimeoutMillis(1000);
        for (String t : new String[] {normalTopic, fifoTopic, delayTopic, txTopic})
            c.subscribe(t, "*");
        c.start();
        Map<String, List<MessageExt>> byTopic = new HashMap<>();
        Set<String> seen = new HashSet<>();
        int fifoTotal = FIFO_GROUPS * FIFO_EACH;
        long deadline = System.currentTimeMillis() + 60000, quietUntil = 0;
        while (System.currentTimeMillis() < deadline) {
            for (MessageExt m : c.poll()) {
                String body = new String(m.getBody(), StandardCharsets.UTF_8);
                if (body.startsWith(group) && seen.add(m.getMsgId()))
                    byTopic.computeIfAbsent(m.getTopic(), k -> new ArrayList<>()).add(m);
            }
            boolean all = count(byTopic, normalTopic) >= NORMAL && count(byTopic, fifoTopic) >= fifoTotal
                && count(byTopic, delayTopic) >= DELAYED && count(byTopic, txTopic) >= 2;
            if (all && quietUntil == 0)
                quietUntil = System.currentTimeMillis() + 3000;   // a rolled-back message must stay away
            if (quietUntil != 0 && System.currentTimeMillis() > quietUntil)
                break;
        }
        c.shutdown();

        int good = 0;
        for (MessageExt m : byTopic.getOrDefault(normalTopic, List.of())) {
            String body = new String(m.getBody(), StandardCharsets.UTF_8);
            if (body.equals(normal.get(m.getMsgId())) && "TagA".equals(m.getTags())
                && ("key-" + body).equals(m.getKeys()))
                good++;
        }
        report(good == NORMAL, "stored-normal",
               good + "/" + NORMAL + " normal messages read back by id with their tag and keys");

        Map<String, List<String>> got = new HashMap<>();
        Map<String, Set<Integer>> queues = new HashMap<>();
        for (MessageExt m : byTopic.getOrDefault(fifoTopic, List.of())) {
            String mg = m.getProperty("__SHARDINGKEY");
            got.computeIfAbsent(mg, k -> new ArrayList<>()).add(new String(m.getBody(), StandardCharsets.UTF_8));
            queues.computeIfAbsent(mg, k -> new HashSet<>()).add(m.getQueueId());
        }
        boolean inOrder = got.equals(fifo), oneQueue = queues.values().stream().allMatch(s -> s.size() == 1);
        report(inOrder && oneQueue, "stored-fifo", "each message group in one queue, in send order: "
               + (inOrder ? "yes" : "no, got " + got) + ", queues " + queues);

        int onTime = 0;
        for (MessageExt m : byTopic.getOrDefault(delayTopic, List.of())) {
            Long at = delayed.get(m.getMsgId());
            if (at != null && m.getStoreTimestamp() >= at - 1000)
                onTime++;
        }
        report(onTime == DELAYED, "stored-delay",
               onTime + "/" + DELAYED + " delayed messages stored in their topic at their delivery time");

        Set<String> txIds = new HashSet<>();
        for (MessageExt m : byTopic.getOrDefault(txTopic, List.of()))
            txIds.add(m.getMsgId());
        report(txIds.contains(committed) && !txIds.contains(rolledBack), "stored-tx",
               "committed visible: " + txIds.contains(committed) + ", rolled back visible: "
               + txIds.contains(rolledBack));
        report(txIds.contains(checked), "stored-tx-check",
               "the transaction committed by the checker visible: " + txIds.contains(checked));
    }

    static int count(Map<String, List<MessageExt>> byTopic, String topic) {
        return byTopic.getOrDefault(topic, List.of()).size();
    }
}
