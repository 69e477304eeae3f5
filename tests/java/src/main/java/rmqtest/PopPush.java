/* PopPush: the unmodified 5.x Java client's push consumer in pop mode over
 * remoting, rebalanced by the broker (setClientRebalance(false)): it sends
 * SET_MESSAGE_REQUEST_MODE (POP) as mqadmin setConsumeMode does, asks
 * QUERY_ASSIGNMENT itself, and lets a DefaultMQPushConsumer consume N
 * messages, failing one once (RECONSUME_LATER). Checks: the mode accepted,
 * PULL and a retry topic's mode refused, the assignment one POP queue -1
 * of the broker, none for the group's retry topic, an unknown topic refused, every message consumed
 * through pops (the POP_CK property the client sets on popped messages),
 * each exactly once but the failed one, which comes back once with
 * reconsumeTimes 1.
 * Prints "OK|FAIL <name> <detail>" lines.
 * Args: namesrv topic group n. */
package rmqtest;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyContext;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.impl.factory.MQClientInstance;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueueAssignment;
import org.apache.rocketmq.common.message.MessageRequestMode;
import org.apache.rocketmq.remoting.protocol.heartbeat.MessageModel;

public final class PopPush {
    private static final String FAILED_KEY = "push-3";

    private PopPush() {
    }

    private static void report(boolean ok, String name, String detail) {
        System.out.println((ok ? "OK " : "FAIL ") + name + " " + detail);
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
        DefaultMQProducer p = new DefaultMQProducer("rmq_push_pop_producer");
        p.setNamesrvAddr(ns);
        p.setInstanceName("push-pop-" + System.nanoTime());
        p.start();
        String brokerName = null;
        for (int i = 0; i < n; i++) {
            SendResult r = p.send(new Message(topic, "tagA", "push-" + i, ("body-" + i).getBytes()));
            brokerName = r.getMessageQueue().getBrokerName();
        }
        MQClientInstance inst = p.getDefaultMQProducerImpl().getMqClientFactory();
        String addr = inst.findBrokerAddressInPublish(brokerName);
        try {
            assignment(inst.getMQClientAPIImpl(), addr, brokerName, topic, group, inst.getClientId());
            consume(ns, topic, group, n);
        } finally {
            p.shutdown();
        }
    }

    /* SET_MESSAGE_REQUEST_MODE and the QUERY_ASSIGNMENT answer. */
    private static void assignment(MQClientAPIImpl api, String addr, String brokerName, String topic, String group,
                                   String clientId) throws Exception {
        try {
            api.setMessageRequestMode(addr, topic, group, MessageRequestMode.POP, 0, 3000);
            report(true, "mode-set", "SET_MESSAGE_REQUEST_MODE POP accepted");
        } catch (Exception e) {
            report(false, "mode-set", e.toString().replace('\n', ' '));
        }
        report(modeCode(api, addr, topic, group, MessageRequestMode.PULL) == 1
               && modeCode(api, addr, "%RETRY%" + group, group, MessageRequestMode.POP) == 16, "mode-refused",
               "PULL: SYSTEM_ERROR, a retry topic: NO_PERMISSION");
        try {
            Set<MessageQueueAssignment> retry = api.queryAssignment(addr, "%RETRY%" + group, group, clientId, "AVG",
                                                                    MessageModel.CLUSTERING, 3000);
            report(retry.isEmpty(), "assign-retry", retry.toString());
        } catch (Exception e) {
            report(false, "assign-retry", e.toString().replace('\n', ' '));
        }
        try {
            api.queryAssignment(addr, "NoSuchTopic", group, clientId, "AVG", MessageModel.CLUSTERING, 3000);
            report(false, "assign-unknown", "NoSuchTopic assigned");
        } catch (MQBrokerException e) {
            report(e.getResponseCode() == 17, "assign-unknown", e.toString().replace('\n', ' '));
        }
        try {
            Set<MessageQueueAssignment> as = api.queryAssignment(addr, topic, group, clientId, "AVG",
                                                                 MessageModel.CLUSTERING, 3000);
            MessageQueueAssignment a = as.size() == 1 ? as.iterator().next() : null;
            boolean ok = a != null && a.getMode() == MessageRequestMode.POP && a.getMessageQueue().getQueueId() == -1 &&
                         brokerName.equals(a.getMessageQueue().getBrokerName()) &&
                         topic.equals(a.getMessageQueue().getTopic());
            report(ok, "assign", as.toString());
        } catch (Exception e) {
            report(false, "assign", e.toString().replace('\n', ' '));
        }
    }

    /* The response code SET_MESSAGE_REQUEST_MODE of mode on topic gets (0: accepted). */
    private static int modeCode(MQClientAPIImpl api, String addr, String topic, String group,
                                MessageRequestMode mode) throws Exception {
        try {
            api.setMessageRequestMode(addr, topic, group, mode, 0, 3000);
            return 0;
        } catch (MQClientException e) {
            return e.getResponseCode();
        }
    }

    /* A pop-mode push consumer: every message once through pops, FAILED_KEY twice. */
    private static void consume(String ns, String topic, String group, int n) throws Exception {
        Map<String, Integer> seen = new ConcurrentHashMap<>();
        AtomicInteger notPopped = new AtomicInteger();
        AtomicInteger retryTimes = new AtomicInteger(-1);
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group);
        c.setNamesrvAddr(ns);
        c.setInstanceName("push-pop-consumer-" + System.nanoTime());
        c.setClientRebalance(false);
        c.subscribe(topic, "*");
        c.registerMessageListener((List<MessageExt> msgs, ConsumeConcurrentlyContext ctx) -> {
            for (MessageExt m : msgs) {
                int times = seen.merge(m.getKeys(), 1, Integer::sum);
                if (m.getProperty(MessageConst.PROPERTY_POP_CK) == null)
                    notPopped.incrementAndGet();
                if (FAILED_KEY.equals(m.getKeys()) && times == 1)
                    return ConsumeConcurrentlyStatus.RECONSUME_LATER;
                if (FAILED_KEY.equals(m.getKeys()))
                    retryTimes.set(m.getReconsumeTimes());
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        try {
            long end = System.currentTimeMillis() + TimeUnit.SECONDS.toMillis(90);
            while (System.currentTimeMillis() < end && (seen.size() < n || seen.getOrDefault(FAILED_KEY, 0) < 2))
                Thread.sleep(200);
            Thread.sleep(3000);      /* anything delivered twice shows now */
        } finally {
            c.shutdown();
        }
        int twice = 0;
        for (Map.Entry<String, Integer> e : seen.entrySet())
            if (!e.getKey().equals(FAILED_KEY) && e.getValue() != 1)
                twice++;
        report(seen.size() == n, "push-all", seen.size() + " of " + n + " messages consumed");
        report(notPopped.get() == 0, "push-popped", notPopped.get() + " deliveries without POP_CK (not popped)");
        report(twice == 0, "push-once", twice + " messages other than the failed one consumed more than once");
        report(seen.getOrDefault(FAILED_KEY, 0) == 2 && retryTimes.get() == 1, "push-retry",
               "failed message consumed " + seen.getOrDefault(FAILED_KEY, 0) + " times, reconsumeTimes "
               + retryTimes.get() + " the second time");
    }
}
