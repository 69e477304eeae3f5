/* LitePull: the unmodified 5.x Java client's DefaultLitePullConsumer over
 * remoting, whose pulls are LITE_PULL_MESSAGE (361). Sends N messages,
 * then: subscribe mode polls every one; assign mode with seekToBegin on
 * every queue polls every one again; seek(queue, k) on the queue holding
 * the most messages polls exactly its messages from offset k on; the
 * producer's earliestMsgStoreTime (GET_EARLIEST_MSG_STORETIME, 32) of each
 * queue lies between the first send and the last.
 * Prints "OK|FAIL <name> <detail>" lines.
 * Args: namesrv topic group n. */
package rmqtest;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;

public final class LitePull {
    private static final long SEEK_OFFSET = 2;

    private LitePull() {
    }

    private static boolean report(boolean ok, String name, String detail) {
        System.out.println((ok ? "OK " : "FAIL ") + name + " " + detail);
        return ok;
    }

    private static String body(MessageExt m) {
        return new String(m.getBody(), StandardCharsets.UTF_8);
    }

    /* Polls c until n messages arrived or seconds passed (every message, duplicates too). */
    private static List<MessageExt> pollAll(DefaultLitePullConsumer c, int n, int seconds) {
        List<MessageExt> got = new ArrayList<>();
        long until = System.currentTimeMillis() + seconds * 1000L;
        while (got.size() < n && System.currentTimeMillis() < until) {
            got.addAll(c.poll(1000));
        }
        return got;
    }

    private static Set<String> bodies(List<MessageExt> msgs) {
        Set<String> s = new HashSet<>();
        for (MessageExt m : msgs) {
            s.add(body(m));
        }
        return s;
    }

    private static DefaultLitePullConsumer consumer(String ns, String group, String instance) {
        DefaultLitePullConsumer c = new DefaultLitePullConsumer(group);
        c.setNamesrvAddr(ns);
        c.setInstanceName(instance);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        return c;
    }

    public static void main(String[] args) throws Exception {
        String ns = args[0], topic = args[1], group = args[2];
        int n = Integer.parseInt(args[3]);
        DefaultMQProducer p = new DefaultMQProducer("rmq_lite_producer");
        p.setNamesrvAddr(ns);
        p.setInstanceName("lite-producer");
        p.setSendMsgTimeout(10000);
        p.start();
        Map<MessageQueue, Integer> perQueue = new HashMap<>();
        long firstSend = System.currentTimeMillis();
        for (int i = 0; i < n; i++) {
            SendResult r = p.send(new Message(topic, "l", ("lite-" + i).getBytes(StandardCharsets.UTF_8)));
            perQueue.merge(r.getMessageQueue(), 1, Integer::sum);
        }
        long lastSend = System.currentTimeMillis();
        boolean ok = true;

        DefaultLitePullConsumer sub = consumer(ns, group, "lite-subscribe");
        sub.subscribe(topic, "*");
        sub.start();
        Set<String> got = bodies(pollAll(sub, n, 120));
        sub.shutdown();
        ok &= report(got.size() == n, "lite-subscribe", "polled " + got.size() + " of " + n);

        DefaultLitePullConsumer asg = consumer(ns, group + "_assign", "lite-assign");
        asg.setAutoCommit(false);
        asg.start();
        Collection<MessageQueue> mqs = asg.fetchMessageQueues(topic);
        asg.assign(mqs);
        for (MessageQueue mq : mqs) {
            asg.seekToBegin(mq);
        }
        Set<String> again = bodies(pollAll(asg, n, 120));
        ok &= report(again.size() == n, "lite-assign-begin",
            "polled " + again.size() + " of " + n + " from " + mqs.size() + " assigned queues");

        MessageQueue fullest = null;
        for (Map.Entry<MessageQueue, Integer> e : perQueue.entrySet()) {
            if (fullest == null || e.getValue() > perQueue.get(fullest)) {
                fullest = e.getKey();
            }
        }
        int expect = perQueue.get(fullest) - (int) SEEK_OFFSET;
        asg.seek(fullest, SEEK_OFFSET);
        List<MessageExt> tail = pollAll(asg, expect, 60);
        asg.shutdown();
        Set<Long> offsets = new TreeSet<>();
        boolean sameQueue = true;
        for (MessageExt m : tail) {
            offsets.add(m.getQueueOffset());
            sameQueue &= m.getQueueId() == fullest.getQueueId();
        }
        long lowest = offsets.isEmpty() ? -1 : offsets.iterator().next();
        ok &= report(sameQueue && tail.size() == expect && offsets.size() == expect && lowest == SEEK_OFFSET,
            "lite-assign-seek", "after seek to " + SEEK_OFFSET + " on queue " + fullest.getQueueId() + ": polled "
            + tail.size() + " (expected " + expect + "), offsets " + offsets + ", only that queue " + sameQueue);

        ok &= earliestStoreTimes(p, perQueue.keySet(), firstSend, lastSend);
        p.shutdown();
        System.exit(ok ? 0 : 1);
    }

    /* Checks that each queue's earliestMsgStoreTime lies in [firstSend, lastSend] (1 s of slack). */
    private static boolean earliestStoreTimes(DefaultMQProducer p, Set<MessageQueue> mqs, long firstSend,
                                              long lastSend) {
        StringBuilder times = new StringBuilder();
        boolean inRange = true;
        try {
            for (MessageQueue mq : mqs) {
                long t = p.earliestMsgStoreTime(mq);
                times.append(" q").append(mq.getQueueId()).append('=').append(t);
                inRange &= t >= firstSend - 1000 && t <= lastSend + 1000;
            }
        } catch (Exception e) {
            return report(false, "earliest-store-time", "failed: " + e);
        }
        return report(inRange, "earliest-store-time",
            "sent between " + firstSend + " and " + lastSend + ", earliest store times" + times);
    }
}
