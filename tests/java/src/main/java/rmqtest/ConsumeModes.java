/* ConsumeModes: the unmodified RocketMQ 4.9 Java client's other ways to
 * consume, and its queries, against an rmq name server and broker, for
 * tests/java/run_consume_modes_test.sh. One mode per run; each prints
 * "OK <mode> <detail>" or "FAIL <mode> <detail>" and exits 0 / 1:
 *
 *   orderly NS TOPIC GROUP N     N messages over 8 sharding keys, each key
 *                                to one queue (MessageQueueSelector); two
 *                                push consumers with MessageListenerOrderly,
 *                                the second started after a third of the
 *                                messages (a rebalance moves queues, which
 *                                takes the broker's queue locks); every
 *                                message consumed, each consumer sees the
 *                                messages of a key in send order, and the
 *                                second one gets queues.
 *   broadcast NS TOPIC GROUP N   two BROADCASTING push consumers each get
 *                                all N messages.
 *   litepull NS TOPIC GROUP N    DefaultLitePullConsumer: subscribe mode
 *                                polls all N messages, then assign mode
 *                                (every queue, seek to 0) reads them again.
 *   query NS TOPIC N             N messages with key "qkey" (and one with
 *                                "lonely"): queryMessage by key finds them
 *                                all, viewMessage by offset msgId and by
 *                                (topic, uniq id) return the sent body. */
package rmqtest;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.rocketmq.client.QueryResult;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.listener.MessageListenerOrderly;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.common.protocol.heartbeat.MessageModel;

public final class ConsumeModes {
    private static final int KEYS = 8;
    /* Route look-ups at start fail the start past this; the test machines are loaded. */
    private static final int CLIENT_API_TIMEOUT_MS = 15000;

    private ConsumeModes() {
    }

    public static void main(String[] args) throws Exception {
        boolean ok;
        switch (args[0]) {
            case "orderly":
                ok = orderly(args[1], args[2], args[3], Integer.parseInt(args[4]));
                break;
            case "broadcast":
                ok = broadcast(args[1], args[2], args[3], Integer.parseInt(args[4]));
                break;
            case "litepull":
                ok = litePull(args[1], args[2], args[3], Integer.parseInt(args[4]));
                break;
            default:
                ok = query(args[1], args[2], Integer.parseInt(args[3]));
                break;
        }
        System.exit(ok ? 0 : 1);
    }

    private static boolean report(boolean ok, String mode, String detail) {
        System.out.println((ok ? "OK " : "FAIL ") + mode + " " + detail);
        return ok;
    }

    private static DefaultMQProducer producer(String ns, String name) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer("rmq_modes_producer");
        p.setNamesrvAddr(ns);
        p.setMqClientApiTimeout(CLIENT_API_TIMEOUT_MS);
        p.setInstanceName(name);
        p.setSendMsgTimeout(10000);
        p.start();
        return p;
    }

    private static String body(MessageExt m) {
        return new String(m.getBody(), StandardCharsets.UTF_8);
    }

    /* Waits until done() or seconds pass. */
    private static void await(java.util.function.BooleanSupplier done, int seconds) throws InterruptedException {
        long until = System.currentTimeMillis() + seconds * 1000L;
        while (!done.getAsBoolean() && System.currentTimeMillis() < until) {
            Thread.sleep(100);
        }
    }

    /* Sends messages from..to-1 with body "key-<i % KEYS>:<i>", each key to one queue. */
    private static void sendOrdered(DefaultMQProducer p, String topic, int from, int to) throws Exception {
        for (int i = from; i < to; i++) {
            int key = i % KEYS;
            Message m = new Message(topic, "o", ("key-" + key + ":" + i).getBytes(StandardCharsets.UTF_8));
            SendResult r = p.send(m, (mqs, msg, arg) -> mqs.get((Integer) arg % mqs.size()), key);
            if (r.getSendStatus() != SendStatus.SEND_OK) {
                throw new IllegalStateException("send " + i + ": " + r.getSendStatus());
            }
        }
    }

    /* One orderly consumer: records, per key, the sequence numbers in the order consumed. */
    private static final class Orderly {
        final DefaultMQPushConsumer consumer;
        final Map<Integer, List<Integer>> seen = new HashMap<>();
        final Set<Integer> queues = ConcurrentHashMap.newKeySet();

        Orderly(String ns, String topic, String group, String name, Set<Integer> all) throws Exception {
            consumer = new DefaultMQPushConsumer(group);
            consumer.setNamesrvAddr(ns);
            consumer.setMqClientApiTimeout(CLIENT_API_TIMEOUT_MS);
            consumer.setInstanceName(name);
            consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
            consumer.subscribe(topic, "*");
            consumer.registerMessageListener((MessageListenerOrderly) (msgs, ctx) -> {
                for (MessageExt m : msgs) {
                    String[] kv = body(m).split(":");
                    int key = Integer.parseInt(kv[0].substring(4));
                    int seq = Integer.parseInt(kv[1]);
                    synchronized (seen) {
                        seen.computeIfAbsent(key, k -> new ArrayList<>()).add(seq);
                    }
                    queues.add(m.getQueueId());
                    all.add(seq);
                }
                return ConsumeOrderlyStatus.SUCCESS;
            });
            consumer.start();
        }

        /* The first key whose sequence goes backwards here, or -1. */
        int outOfOrder() {
            synchronized (seen) {
                for (Map.Entry<Integer, List<Integer>> e : seen.entrySet()) {
                    List<Integer> s = e.getValue();
                    for (int i = 1; i < s.size(); i++) {
                        if (s.get(i) < s.get(i - 1)) {
                            return e.getKey();
                        }
                    }
                }
            }
            return -1;
        }

        int count() {
            synchronized (seen) {
                return seen.values().stream().mapToInt(List::size).sum();
            }
        }
    }

    private static boolean orderly(String ns, String topic, String group, int n) throws Exception {
        Set<Integer> all = ConcurrentHashMap.newKeySet();
        DefaultMQProducer p = producer(ns, "orderly-producer");
        Orderly a = new Orderly(ns, topic, group, "orderly-a", all);
        sendOrdered(p, topic, 0, n / 3);
        await(() -> all.size() >= n / 3, 60);
        Orderly b = new Orderly(ns, topic, group, "orderly-b", all);
        sendOrdered(p, topic, n / 3, n);
        await(() -> all.size() >= n && !b.queues.isEmpty(), 120);
        Thread.sleep(1000);
        a.consumer.shutdown();
        b.consumer.shutdown();
        p.shutdown();
        String detail = "consumed " + all.size() + " distinct of " + n + "; a " + a.count() + " on queues "
            + a.queues + ", b " + b.count() + " on queues " + b.queues + "; out of order: a key "
            + a.outOfOrder() + ", b key " + b.outOfOrder();
        return report(all.size() == n && a.outOfOrder() < 0 && b.outOfOrder() < 0 && !b.queues.isEmpty()
            && !a.queues.isEmpty(), "orderly", detail);
    }

    private static DefaultMQPushConsumer broadcaster(String ns, String topic, String group, String name,
                                                     Set<String> got) throws Exception {
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group);
        c.setNamesrvAddr(ns);
        c.setMqClientApiTimeout(CLIENT_API_TIMEOUT_MS);
        c.setInstanceName(name);
        c.setMessageModel(MessageModel.BROADCASTING);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(topic, "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                got.add(body(m));
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        return c;
    }

    private static boolean broadcast(String ns, String topic, String group, int n) throws Exception {
        Set<String> a = ConcurrentHashMap.newKeySet(), b = ConcurrentHashMap.newKeySet();
        DefaultMQPushConsumer ca = broadcaster(ns, topic, group, "bcast-a", a);
        DefaultMQPushConsumer cb = broadcaster(ns, topic, group, "bcast-b", b);
        Thread.sleep(2000);
        DefaultMQProducer p = producer(ns, "bcast-producer");
        for (int i = 0; i < n; i++) {
            p.send(new Message(topic, "b", ("bcast-" + i).getBytes(StandardCharsets.UTF_8)));
        }
        await(() -> a.size() >= n && b.size() >= n, 120);
        ca.shutdown();
        cb.shutdown();
        p.shutdown();
        return report(a.size() == n && b.size() == n, "broadcast",
            "consumer a got " + a.size() + ", consumer b got " + b.size() + " of " + n);
    }

    /* Polls c until n distinct bodies arrived or seconds passed. */
    private static Set<String> pollAll(DefaultLitePullConsumer c, int n, int seconds) {
        Set<String> got = new HashSet<>();
        long until = System.currentTimeMillis() + seconds * 1000L;
        while (got.size() < n && System.currentTimeMillis() < until) {
            for (MessageExt m : c.poll(1000)) {
                got.add(body(m));
            }
        }
        return got;
    }

    private static boolean litePull(String ns, String topic, String group, int n) throws Exception {
        DefaultMQProducer p = producer(ns, "lite-producer");
        for (int i = 0; i < n; i++) {
            p.send(new Message(topic, "l", ("lite-" + i).getBytes(StandardCharsets.UTF_8)));
        }
        p.shutdown();
        DefaultLitePullConsumer sub = new DefaultLitePullConsumer(group);
        sub.setNamesrvAddr(ns);
        sub.setMqClientApiTimeout(CLIENT_API_TIMEOUT_MS);
        sub.setInstanceName("lite-subscribe");
        sub.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        sub.subscribe(topic, "*");
        sub.start();
        Set<String> got = pollAll(sub, n, 120);
        sub.shutdown();
        boolean ok = report(got.size() == n, "litepull-subscribe", "polled " + got.size() + " of " + n);

        DefaultLitePullConsumer asg = new DefaultLitePullConsumer(group + "_assign");
        asg.setNamesrvAddr(ns);
        asg.setMqClientApiTimeout(CLIENT_API_TIMEOUT_MS);
        asg.setInstanceName("lite-assign");
        asg.setAutoCommit(false);
        /* assign() starts a pull task per queue at once; a task that had begun before
         * seek() can take the seek offset, leaving its successor to compute the start
         * from consumeFromWhere (the client's race, seen on a loaded CI machine as one
         * queue polled from its end): first offset keeps that start at 0 as well. */
        asg.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        asg.start();
        Collection<MessageQueue> mqs = asg.fetchMessageQueues(topic);
        asg.assign(mqs);
        for (MessageQueue mq : mqs) {
            asg.seek(mq, 0);
        }
        Set<String> again = pollAll(asg, n, 120);
        asg.shutdown();
        return report(again.size() == n, "litepull-assign",
            "polled " + again.size() + " of " + n + " from " + mqs.size() + " assigned queues") && ok;
    }

    private static boolean query(String ns, String topic, int n) throws Exception {
        DefaultMQProducer p = producer(ns, "query-producer");
        Map<String, String> sent = new HashMap<>();
        String offsetId = null, uniqId = null, lonelyBody = "lonely-body";
        for (int i = 0; i < n; i++) {
            Message m = new Message(topic, "q", "qkey", ("query-" + i).getBytes(StandardCharsets.UTF_8));
            SendResult r = p.send(m);
            sent.put(r.getMsgId(), "query-" + i);     /* the client's UNIQ_KEY */
        }
        SendResult lonely = p.send(new Message(topic, "q", "lonely", lonelyBody.getBytes(StandardCharsets.UTF_8)));
        offsetId = lonely.getOffsetMsgId();
        uniqId = lonely.getMsgId();

        Set<String> found = new HashSet<>();
        long until = System.currentTimeMillis() + 30000;
        while (found.size() < n && System.currentTimeMillis() < until) {
            try {
                QueryResult qr = p.queryMessage(topic, "qkey", 64, 0, Long.MAX_VALUE);
                for (MessageExt m : qr.getMessageList()) {
                    String id = m.getProperty("UNIQ_KEY");
                    if (id != null && body(m).equals(sent.get(id))) {
                        found.add(id);
                    }
                }
            } catch (Exception e) {
                Thread.sleep(200);     /* the key index is built on dispatch */
            }
        }
        boolean ok = report(found.size() == n, "query-key", "found " + found.size() + " of " + n + " by key");
        MessageExt byOffset = p.viewMessage(offsetId);
        ok = report(lonelyBody.equals(body(byOffset)) && uniqId.equals(byOffset.getProperty("UNIQ_KEY")), "view-offset-id",
            offsetId + " -> " + body(byOffset)) && ok;
        MessageExt byUniq = p.viewMessage(topic, uniqId);
        ok = report(lonelyBody.equals(body(byUniq)), "view-uniq-id", uniqId + " -> " + body(byUniq)) && ok;
        boolean none;
        try {
            none = p.queryMessage(topic, "no-such-key", 64, 0, Long.MAX_VALUE).getMessageList().isEmpty();
        } catch (Exception e) {
            none = e.getMessage() != null && e.getMessage().contains("no message");
        }
        ok = report(none, "query-none", "a key nobody sent finds nothing") && ok;
        p.shutdown();
        return ok;
    }
}
