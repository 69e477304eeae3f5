/* LitePull: the unmodified 5.x Java client's DefaultLitePullConsumer over
 * remoting, whose pulls are LITE_PULL_MESSAGE (361). Sends N messages,
 * then: subscribe mode polls every one, from each of the expected brokers;
 * assign mode with seekToBegin on every queue polls every one again, from
 * each of them; seek(queue, k) on the queue holding the most messages
 * polls exactly its messages from offset k on; the producer's
 * earliestMsgStoreTime (GET_EARLIEST_MSG_STORETIME, 32) of each queue lies
 * between the first send and the last.
 * Prints "OK|FAIL <name> <detail>" lines.
 * Args: namesrv topic group n brokers (the expected broker names,
 * comma-separated). */
package rmqtest;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
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
    /* Route look-ups at start fail the start past this; the test machines are loaded. */
    private static final int CLIENT_API_TIMEOUT_MS = 15000;
    /* A consumer's route look-up lost at its start (RouteRetry) is redone this soon. */
    private static final int POLL_NAME_SERVER_MS = 1000;

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

    /* The names of the brokers msgs came from. */
    private static Set<String> brokers(List<MessageExt> msgs) {
        Set<String> s = new TreeSet<>();
        for (MessageExt m : msgs) {
            s.add(String.valueOf(m.getBrokerName()));
        }
        return s;
    }

    private static DefaultLitePullConsumer consumer(String ns, String group, String instance) {
        DefaultLitePullConsumer c = new DefaultLitePullConsumer(group);
        c.setNamesrvAddr(ns);
        c.setMqClientApiTimeout(CLIENT_API_TIMEOUT_MS);
        c.setPollNameServerInterval(POLL_NAME_SERVER_MS);
        c.setInstanceName(instance);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        return c;
    }

    public static void main(String[] args) throws Exception {
        String ns = args[0], topic = args[1], group = args[2];
        int n = Integer.parseInt(args[3]);
        Set<String> brokers = new TreeSet<>(Arrays.asList(args[4].split(",")));
        DefaultMQProducer p = new DefaultMQProducer("rmq_lite_producer");
        p.setNamesrvAddr(ns);
        p.setInstanceName("lite-producer");
        p.setMqClientApiTimeout(CLIENT_API_TIMEOUT_MS);
        p.setSendMsgTimeout(10000);
        p.start();
        Map<MessageQueue, Integer> perQueue = new HashMap<>();
        long firstSend = System.currentTimeMillis();
        for (int i = 0; i < n; i++) {
            SendResult r = RouteRetry.send(p, new Message(topic, "l", ("lite-" + i).getBytes(StandardCharsets.UTF_8)));
            perQueue.merge(r.getMessageQueue(), 1, Integer::sum);
        }
        long lastSend = System.currentTimeMillis();
        boolean ok = true;

        DefaultLitePullConsumer sub = consumer(ns, group, "lite-subscribe");
        sub.subscribe(topic, "*");
        sub.start();
        List<MessageExt> subscribed = pollAll(sub, n, 120);
        sub.shutdown();
        Set<String> got = bodies(subscribed);
        ok &= report(got.size() == n && brokers(subscribed).equals(brokers), "lite-subscribe",
            "polled " + got.size() + " of " + n + " from " + brokers(subscribed) + ", expected " + brokers);

        DefaultLitePullConsumer asg = consumer(ns, group + "_assign", "lite-assign");
        asg.setAutoCommit(false);
        asg.start();
        Collection<MessageQueue> mqs = asg.fetchMessageQueues(topic);
        asg.assign(mqs);
        for (MessageQueue mq : mqs) {
            asg.seekToBegin(mq);
        }
        List<MessageExt> fromBegin = pollAll(asg, n, 120);
        Set<String> again = bodies(fromBegin);
        ok &= report(again.size() == n && brokers(fromBegin).equals(brokers), "lite-assign-begin",
            "polled " + again.size() + " of " + n + " from " + mqs.size() + " assigned queues of "
            + brokers(fromBegin) + ", expected " + brokers);

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
            sameQueue &= m.getQueueId() == fullest.getQueueId()
                && fullest.getBrokerName().equals(m.getBrokerName());
        }
        long lowest = offsets.isEmpty() ? -1 : offsets.iterator().next();
        ok &= report(sameQueue && tail.size() == expect && offsets.size() == expect && lowest == SEEK_OFFSET,
            "lite-assign-seek", "after seek to " + SEEK_OFFSET + " on queue " + fullest.getBrokerName() + "/"
            + fullest.getQueueId() + ": polled " + tail.size() + " (expected " + expect + "), offsets " + offsets
            + ", only that queue " + sameQueue);

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
                times.append(' ').append(mq.getBrokerName()).append('/').append(mq.getQueueId()).append('=').append(t);
                inRange &= t >= firstSend - 1000 && t <= lastSend + 1000;
            }
        } catch (Exception e) {
            return report(false, "earliest-store-time", "failed: " + e);
        }
        return report(inRange, "earliest-store-time",
            "sent between " + firstSend + " and " + lastSend + ", earliest store times" + times);
    }
}
