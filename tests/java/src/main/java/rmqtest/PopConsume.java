/* PopConsume: pop consumption over remoting with the unmodified 5.x Java
 * client's own pop and ack calls (MQClientAPIImpl: POP_MESSAGE,
 * ACK_MESSAGE, CHANGE_MESSAGE_INVISIBLETIME, as its pop-mode push consumer
 * makes them). Sends N messages, pops them all with a short invisible time,
 * acks the even ones, changes the invisible time of one odd one, and
 * checks that exactly the unacked odd ones come back after the invisible
 * time with reconsumeTimes 1 (delivery attempt 2), that nothing comes
 * after they are acked too (in one BATCH_ACK_MESSAGE), and that a second
 * ack of an acked message is refused. With "fifo": N messages to queue 0, FIFO pops of it (order=true):
 * the batch blocks the queue, comes again after the invisible time with
 * reconsumeTimes 1, and the next batch follows once it is acked.
 * Prints "OK|FAIL <name> <detail>" lines.
 * Args: namesrv topic group n [fifo]. */
package rmqtest;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.rocketmq.client.consumer.AckCallback;
import org.apache.rocketmq.client.consumer.AckResult;
import org.apache.rocketmq.client.consumer.AckStatus;
import org.apache.rocketmq.client.consumer.PopCallback;
import org.apache.rocketmq.client.consumer.PopResult;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.impl.factory.MQClientInstance;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageAccessor;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.remoting.protocol.header.AckMessageRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.ChangeInvisibleTimeRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.ExtraInfoUtil;
import org.apache.rocketmq.remoting.protocol.header.PopMessageRequestHeader;

public final class PopConsume {
    private static final long INVISIBLE_MS = 5000;

    private final MQClientAPIImpl api;
    private final String brokerName;
    private final String addr;
    private final String topic;
    private final String group;

    private PopConsume(MQClientAPIImpl api, String brokerName, String addr, String topic, String group) {
        this.api = api;
        this.brokerName = brokerName;
        this.addr = addr;
        this.topic = topic;
        this.group = group;
    }

    private static void report(boolean ok, String name, String detail) {
        System.out.println((ok ? "OK " : "FAIL ") + name + " " + detail);
    }

    /* One pop of up to 16 messages, waiting up to pollMs. */
    private PopResult pop(long pollMs) throws Exception {
        return pop(pollMs, -1, null, 16);
    }

    /* One pop (a FIFO pop of queueId with attemptId when that is not null). */
    private PopResult pop(long pollMs, int queueId, String attemptId, int max) throws Exception {
        PopMessageRequestHeader h = new PopMessageRequestHeader();
        h.setConsumerGroup(group);
        h.setTopic(topic);
        h.setQueueId(queueId);
        h.setMaxMsgNums(max);
        h.setInvisibleTime(INVISIBLE_MS);
        if (attemptId != null) {
            h.setOrder(Boolean.TRUE);
            h.setAttemptId(attemptId);
        }
        h.setPollTime(pollMs);
        h.setBornTime(System.currentTimeMillis());
        h.setInitMode(0);
        h.setExpType("TAG");
        h.setExp("*");
        CompletableFuture<PopResult> f = new CompletableFuture<>();
        api.popMessageAsync(brokerName, addr, h, pollMs + 5000, new PopCallback() {
            public void onSuccess(PopResult r) {
                f.complete(r);
            }

            public void onException(Throwable e) {
                f.completeExceptionally(e);
            }
        });
        return f.get(pollMs + 10000, TimeUnit.MILLISECONDS);
    }

    /* Pops until want distinct keys came or ms passed; key -> message. */
    private Map<String, MessageExt> popUntil(int want, long ms) throws Exception {
        Map<String, MessageExt> got = new TreeMap<>();
        long deadline = System.currentTimeMillis() + ms;
        while (got.size() < want && System.currentTimeMillis() < deadline) {
            PopResult r = pop(1000);
            if (r.getMsgFoundList() == null)
                continue;
            for (MessageExt m : r.getMsgFoundList())
                got.putIfAbsent(m.getKeys(), m);
        }
        return got;
    }

    private static AckCallback callback(CompletableFuture<AckResult> f) {
        return new AckCallback() {
            public void onSuccess(AckResult r) {
                f.complete(r);
            }

            public void onException(Throwable e) {
                f.completeExceptionally(e);
            }
        };
    }

    /* Acks m as the pop-mode push consumer does; true when the broker said OK. */
    private boolean ack(MessageExt m) {
        String ck = m.getProperty(MessageConst.PROPERTY_POP_CK);
        String[] f = ExtraInfoUtil.split(ck);
        AckMessageRequestHeader h = new AckMessageRequestHeader();
        h.setConsumerGroup(group);
        h.setTopic(ExtraInfoUtil.getRealTopic(f, topic, group));
        h.setQueueId(ExtraInfoUtil.getQueueId(f));
        h.setOffset(ExtraInfoUtil.getQueueOffset(f));
        h.setExtraInfo(ck);
        CompletableFuture<AckResult> r = new CompletableFuture<>();
        try {
            api.ackMessageAsync(addr, 5000, callback(r), h);
            return r.get(10, TimeUnit.SECONDS).getStatus() == AckStatus.OK;
        } catch (Exception e) {
            return false;
        }
    }

    /* Changes m's invisible time to ms; true when the broker said OK. */
    private boolean changeInvisible(MessageExt m, long ms) throws Exception {
        String ck = m.getProperty(MessageConst.PROPERTY_POP_CK);
        String[] f = ExtraInfoUtil.split(ck);
        ChangeInvisibleTimeRequestHeader h = new ChangeInvisibleTimeRequestHeader();
        h.setConsumerGroup(group);
        h.setTopic(ExtraInfoUtil.getRealTopic(f, topic, group));
        h.setQueueId(ExtraInfoUtil.getQueueId(f));
        h.setOffset(ExtraInfoUtil.getQueueOffset(f));
        h.setExtraInfo(ck);
        h.setInvisibleTime(ms);
        CompletableFuture<AckResult> r = new CompletableFuture<>();
        api.changeInvisibleTimeAsync(brokerName, addr, h, 5000, callback(r));
        AckResult res = r.get(10, TimeUnit.SECONDS);
        if (res.getStatus() == AckStatus.OK)
            MessageAccessor.putProperty(m, MessageConst.PROPERTY_POP_CK, res.getExtraInfo());
        return res.getStatus() == AckStatus.OK;
    }

    public static void main(String[] args) {
        try {
            test(args);
        } catch (Exception e) {
            e.printStackTrace();
            System.exit(1);
        }
        System.exit(0);
    }

    private static void test(String[] args) throws Exception {
        String ns = args[0], topic = args[1], group = args[2];
        int n = Integer.parseInt(args[3]);
        DefaultMQProducer p = new DefaultMQProducer("rmq_pop_producer");
        p.setNamesrvAddr(ns);
        p.setInstanceName("pop-" + System.nanoTime());
        p.start();
        String brokerName = null;
        boolean fifo = args.length > 4 && args[4].equals("fifo");
        for (int i = 0; i < n; i++) {
            Message m = new Message(topic, "tagA", "pop-" + i, ("body-" + i).getBytes());
            SendResult r = fifo ? p.send(m, (mqs, msg, arg) -> mqs.get(0), null) : p.send(m);
            brokerName = r.getMessageQueue().getBrokerName();
        }
        MQClientInstance inst = p.getDefaultMQProducerImpl().getMqClientFactory();
        PopConsume pc = new PopConsume(inst.getMQClientAPIImpl(), brokerName,
                                       inst.findBrokerAddressInPublish(brokerName), topic, group);
        try {
            if (fifo)
                pc.runFifo(n);
            else
                pc.run(n);
        } finally {
            p.shutdown();
        }
    }

    /* Keys of a FIFO pop's messages in order, "key:reconsumeTimes" each. */
    private String fifoPop(String attemptId) throws Exception {
        PopResult r = pop(0, 0, attemptId, 4);
        StringBuilder b = new StringBuilder();
        if (r.getMsgFoundList() != null)
            for (MessageExt m : r.getMsgFoundList())
                b.append(b.length() > 0 ? " " : "").append(m.getKeys()).append(':').append(m.getReconsumeTimes());
        return b.toString();
    }

    private void runFifo(int n) throws Exception {
        String first = "";
        long deadline = System.currentTimeMillis() + 10000;
        while (first.isEmpty() && System.currentTimeMillis() < deadline)
            first = fifoPop("x1");
        report(first.equals("pop-0:0 pop-1:0 pop-2:0 pop-3:0"), "fifo-first", "[" + first + "]");
        String same = fifoPop("x1");
        report(same.equals(first), "fifo-same-attempt", "[" + same + "]");
        String blocked = fifoPop("x2");
        report(blocked.isEmpty(), "fifo-blocked", "[" + blocked + "] while the batch is in flight");
        Thread.sleep(INVISIBLE_MS + 500);
        PopResult again = pop(0, 0, "x3", 4);
        StringBuilder b = new StringBuilder();
        int acked = 0;
        for (MessageExt m : again.getMsgFoundList() != null ? again.getMsgFoundList() : java.util.List.<MessageExt>of()) {
            b.append(b.length() > 0 ? " " : "").append(m.getKeys()).append(':').append(m.getReconsumeTimes());
            acked += ack(m) ? 1 : 0;
        }
        report(b.toString().equals("pop-0:1 pop-1:1 pop-2:1 pop-3:1") && acked == 4, "fifo-again",
               "[" + b + "] after the invisible time, " + acked + " acked");
        String next = fifoPop("x4");
        report(next.equals("pop-4:0 pop-5:0 pop-6:0 pop-7:0"), "fifo-next", "[" + next + "] once the batch was acked");
    }

    private void run(int n) throws Exception {
        Map<String, MessageExt> first = popUntil(n, 30000);
        report(first.size() == n, "pop-all", "popped " + first.size() + " of " + n + " sent messages");
        int acked = 0, odd = 0;
        String delayed = null;
        for (Map.Entry<String, MessageExt> e : first.entrySet()) {
            int i = Integer.parseInt(e.getKey().substring(4));
            if (i % 2 == 0)
                acked += ack(e.getValue()) ? 1 : 0;
            else if (delayed == null)
                delayed = e.getKey();
            odd += i % 2;
        }
        report(acked == n - odd, "pop-ack", acked + " of " + (n - odd) + " even messages acked");
        boolean changed = delayed != null && changeInvisible(first.get(delayed), 60000);
        report(changed, "pop-change-invisible", "invisible time of " + delayed + " set to 60 s");
        Map<String, MessageExt> again = popUntil(odd - 1, 30000);
        int wrong = 0, attempt2 = 0;
        for (Map.Entry<String, MessageExt> e : again.entrySet()) {
            int i = Integer.parseInt(e.getKey().substring(4));
            if (i % 2 == 0 || e.getKey().equals(delayed))
                wrong++;
            attempt2 += e.getValue().getReconsumeTimes() == 1 ? 1 : 0;
        }
        report(again.size() == odd - 1 && wrong == 0, "pop-redeliver",
               again.size() + " of " + (odd - 1) + " unacked messages redelivered, " + wrong + " acked or delayed ones");
        report(attempt2 == again.size(), "pop-attempt", attempt2 + " of " + again.size() + " redelivered with reconsumeTimes 1");
        List<String> handles = new ArrayList<>();
        for (MessageExt m : again.values())
            handles.add(m.getProperty(MessageConst.PROPERTY_POP_CK));
        CompletableFuture<AckResult> batch = new CompletableFuture<>();
        api.batchAckMessageAsync(addr, 5000, callback(batch), topic, group, handles);
        boolean batchOk = batch.get(10, TimeUnit.SECONDS).getStatus() == AckStatus.OK;
        acked += ack(first.get(delayed)) ? 1 : 0;
        report(batchOk && acked == n - odd + 1, "pop-ack-retry",
               handles.size() + " redelivered messages batch-acked (" + batchOk + ") and the delayed message acked");
        Map<String, MessageExt> after = popUntil(1, 3 * INVISIBLE_MS + 2000);
        report(after.isEmpty(), "pop-quiet", after.size() + " messages popped after everything was acked");
        MessageExt some = first.values().iterator().next();
        report(!ack(some), "pop-stale-ack", "a second ack of " + some.getKeys() + " refused");
    }
}
