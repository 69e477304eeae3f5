/* Recall: the unmodified 5.x Java client's DefaultMQProducer.recallMessage
 * over remoting (RECALL_MESSAGE, 370; RocketMQ 5.3). A normal message's
 * SendResult has no recall handle, a delayed one's (setDelayTimeMs) has;
 * recalling it answers its msgId, and so does recalling it again; a
 * DefaultLitePullConsumer then gets the other delayed message when due and
 * never the recalled one; recalling the delivered one is refused with
 * ILLEGAL_OPERATION (604).
 * Prints "OK|FAIL <name> <detail>" lines.
 * Args: namesrv topic group. */
package rmqtest;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

public final class Recall {
    private static final long DELAY_MS = 6000;

    private Recall() {
    }

    private static boolean report(boolean ok, String name, String detail) {
        System.out.println((ok ? "OK " : "FAIL ") + name + " " + detail);
        return ok;
    }

    private static SendResult send(DefaultMQProducer p, String topic, String body, boolean delayed) throws Exception {
        Message m = new Message(topic, "T", body.getBytes(StandardCharsets.UTF_8));
        if (delayed) {
            m.setDelayTimeMs(DELAY_MS);
        }
        return p.send(m);
    }

    /* The error of a recall, "" when it succeeded. */
    private static String recallError(DefaultMQProducer p, String topic, String handle) {
        try {
            p.recallMessage(topic, handle);
            return "";
        } catch (MQBrokerException e) {
            return e.getResponseCode() + " " + e.getErrorMessage();
        } catch (Exception e) {
            return e.toString();
        }
    }

    public static void main(String[] args) throws Exception {
        String ns = args[0];
        String topic = args[1];
        String group = args[2];
        DefaultMQProducer p = new DefaultMQProducer("recall_producer");
        p.setNamesrvAddr(ns);
        p.start();
        boolean ok = true;
        SendResult normal = send(p, topic, "normal", false);
        ok &= report(normal.getRecallHandle() == null, "normal-no-handle",
            "a normal message's handle: " + normal.getRecallHandle());
        SendResult recalled = send(p, topic, "recalled", true);
        SendResult kept = send(p, topic, "kept", true);
        ok &= report(recalled.getRecallHandle() != null && kept.getRecallHandle() != null, "timer-handle",
            "a delayed message's handle: " + recalled.getRecallHandle());
        String id = p.recallMessage(topic, recalled.getRecallHandle());
        ok &= report(recalled.getMsgId().equals(id), "recall-ok", "recalled " + id + " (sent " + recalled.getMsgId() + ")");
        String again = recallError(p, topic, recalled.getRecallHandle());
        ok &= report(again.isEmpty(), "recall-twice-ok", "recalled again: " + (again.isEmpty() ? "OK" : again));

        DefaultLitePullConsumer c = new DefaultLitePullConsumer(group);
        c.setNamesrvAddr(ns);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(topic, "*");
        c.start();
        List<String> bodies = new ArrayList<>();
        long end = System.currentTimeMillis() + DELAY_MS + 20000;
        long keptAt = 0;
        while (System.currentTimeMillis() < end && (keptAt == 0 || System.currentTimeMillis() < keptAt + 3000)) {
            for (MessageExt m : c.poll(1000)) {
                String body = new String(m.getBody(), StandardCharsets.UTF_8);
                bodies.add(body);
                if (body.equals("kept")) {
                    keptAt = System.currentTimeMillis();
                }
            }
        }
        c.shutdown();
        bodies.sort(null);
        ok &= report(bodies.equals(List.of("kept", "normal")), "recalled-never-delivered", "polled " + bodies);
        String late = recallError(p, topic, kept.getRecallHandle());
        ok &= report(late.startsWith("604 ") && late.contains("timestamp invalid"), "recall-after-delivery-refused",
            "recalled after delivery: " + (late.isEmpty() ? "OK" : late));
        p.shutdown();
        System.exit(ok ? 0 : 1);
    }
}
