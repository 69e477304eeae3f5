/* RequestReply: RocketMQ's request-reply (DefaultMQProducer.request, the
 * API under Spring's RocketMQTemplate.sendAndReceive) with the unmodified
 * 4.9 client, one role per JVM so that a reply reaches the requester only
 * through the connection the broker pushes it on (the client keeps its
 * pending requests in one table per JVM):
 *   responders NS TOPIC CLUSTER N: N responders (push consumers of one
 *     group, each its own client instance) answer every request with
 *     MessageUtil.createReplyMessage (which needs the CLUSTER the broker
 *     stamps); prints "READY", then "REPLIED <responder> <correlation id>"
 *     per request, "LATE reply ..." when the broker refused a reply because
 *     its requester is gone (a request delivered twice, the second time
 *     after the requester left) or "FAIL reply ...", until killed;
 *   requester NS TOPIC ID COUNT: COUNT requests with request(msg, timeout)
 *     and COUNT with request(msg, RequestCallback, timeout) (the 4.9 client
 *     calls onSuccess(null) once the request is sent, then again with the
 *     reply); each reply must carry its request's correlation id and answer
 *     its body
 *     ("OK rr-sync-ID ...", "OK rr-async-ID ..." or FAIL);
 *   down NS TOPIC CLUSTER: with no responder running, a request times out
 *     cleanly with RequestTimeoutException ("OK rr-timeout ..."), and a
 *     reply to a requester that is not connected is refused with
 *     SYSTEM_ERROR naming it ("OK rr-gone ..."). */
package rmqtest;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.RequestTimeoutException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.RequestCallback;
import org.apache.rocketmq.client.utils.MessageUtil;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageAccessor;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;

public final class RequestReply {
    private static final int TIMEOUT_MS = 15000;

    private RequestReply() {
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "responders":
                responders(args[1], args[2], args[3], Integer.parseInt(args[4]));
                break;
            case "requester":
                requester(args[1], args[2], args[3], Integer.parseInt(args[4]));
                break;
            default:
                down(args[1], args[2], args[3]);
        }
        System.exit(0);
    }

    private static String text(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    private static void responders(String ns, String topic, String cluster, int n) throws Exception {
        for (int i = 0; i < n; i++) {
            final String name = "responder-" + i;
            DefaultMQProducer out = new DefaultMQProducer("rr_reply_pg");
            out.setNamesrvAddr(ns);
            out.setInstanceName(name);
            out.start();
            DefaultMQPushConsumer c = new DefaultMQPushConsumer("rr_responders");
            c.setNamesrvAddr(ns);
            c.setInstanceName(name);
            c.subscribe(topic, "*");
            c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
                for (MessageExt m : msgs) {
                    reply(out, name, cluster, m);
                }
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            });
            c.start();
        }
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }

    private static void reply(DefaultMQProducer out, String name, String cluster, MessageExt m) {
        String corr = m.getProperty(MessageConst.PROPERTY_CORRELATION_ID);
        try {
            if (!cluster.equals(m.getProperty(MessageConst.PROPERTY_CLUSTER))) {
                throw new IllegalStateException("request CLUSTER=" + m.getProperty(MessageConst.PROPERTY_CLUSTER));
            }
            Message r = MessageUtil.createReplyMessage(m, ("reply-to:" + text(m.getBody())).getBytes(StandardCharsets.UTF_8));
            out.send(r, TIMEOUT_MS);
            System.out.println("REPLIED " + name + " " + corr);
        } catch (Exception e) {
            String why = rootMessage(e);
            System.out.println((requesterGone(why) ? "LATE reply " : "FAIL reply ") + name + " " + corr + ": " + e
                + " (" + why + ")");
        }
        System.out.flush();
    }

    private static String rootMessage(Throwable e) {
        while (e.getCause() != null) {
            e = e.getCause();
        }
        return String.valueOf(e.getMessage());
    }

    /* The broker's refusal of a reply whose requester is no longer connected:
     * a request delivered again (at least once: two responders can both
     * hold a queue while they rebalance) after its requester had its reply
     * and left. */
    private static boolean requesterGone(String why) {
        return why.contains("push reply message fail, channel of <") && why.contains("> not found");
    }

    /* "" when reply answers req, else what is wrong. */
    private static String check(Message req, Message reply) {
        if (reply == null) {
            return "no reply";
        }
        String want = req.getProperty(MessageConst.PROPERTY_CORRELATION_ID);
        String got = reply.getProperty(MessageConst.PROPERTY_CORRELATION_ID);
        if (want == null || !want.equals(got)) {
            return "correlation id " + got + ", want " + want;
        }
        String body = text(reply.getBody());
        if (!body.equals("reply-to:" + text(req.getBody()))) {
            return "body " + body + " answers another request than " + text(req.getBody());
        }
        return "";
    }

    /* One uncounted request, tried up to 3 times: its route lookup (the
     * name server's answer within the client's 3 s) may time out on a
     * loaded machine, which is not what this test is about. */
    private static void warmUp(DefaultMQProducer p, String topic, String id) {
        for (int i = 0; i < 3; i++) {
            try {
                p.request(new Message(topic, ("req-" + id + "-warmup").getBytes(StandardCharsets.UTF_8)), TIMEOUT_MS);
                return;
            } catch (Exception e) {
                System.out.println("# warm-up request " + i + ": " + e);
            }
        }
    }

    private static void requester(String ns, String topic, String id, int count) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer("rr_requester_" + id);
        p.setNamesrvAddr(ns);
        p.setInstanceName("requester-" + id);
        p.start();
        warmUp(p, topic, id);
        int ok = 0;
        String err = "";
        for (int i = 0; i < count; i++) {
            Message req = new Message(topic, ("req-" + id + "-sync-" + i).getBytes(StandardCharsets.UTF_8));
            try {
                String bad = check(req, p.request(req, TIMEOUT_MS));
                if (bad.isEmpty()) {
                    ok++;
                } else {
                    err = bad;
                }
            } catch (Exception e) {
                err = e.toString();
            }
        }
        System.out.println((ok == count ? "OK" : "FAIL") + " rr-sync-" + id + " " + ok + "/" + count + " replies "
            + "matched their requests " + err);
        CountDownLatch done = new CountDownLatch(count);
        /* the requests answered: a request consumed twice (at least once
         * delivery, e.g. across a rebalance of the responders) is answered
         * twice, and the client may call back for both replies */
        Set<String> good = ConcurrentHashMap.newKeySet();
        Map<String, String> errs = new ConcurrentHashMap<>();
        for (int i = 0; i < count; i++) {
            Message req = new Message(topic, ("req-" + id + "-async-" + i).getBytes(StandardCharsets.UTF_8));
            p.request(req, new RequestCallback() {
                @Override
                public void onSuccess(Message reply) {
                    if (reply == null) {
                        return;       /* the 4.9 client's call once the request is sent, before its reply */
                    }
                    String bad = check(req, reply);
                    if (!bad.isEmpty()) {
                        errs.put(text(req.getBody()), bad);
                    } else if (good.add(text(req.getBody()))) {
                        done.countDown();
                    }
                }

                @Override
                public void onException(Throwable e) {
                    errs.put(text(req.getBody()), e.toString());
                    done.countDown();
                }
            }, TIMEOUT_MS);
        }
        done.await(TIMEOUT_MS + 5000, TimeUnit.MILLISECONDS);
        System.out.println((good.size() == count ? "OK" : "FAIL") + " rr-async-" + id + " " + good.size() + "/" + count
            + " callbacks got their replies " + errs);
        p.shutdown();
    }

    /* One request no responder answers: "OK rr-timeout ..." when it times
     * out cleanly, "FAIL rr-timeout ..." when a reply comes or it takes too
     * long, NULL when it could not be sent (retried as warmUp's). */
    private static String unanswered(DefaultMQProducer p, String topic) {
        long t0 = System.currentTimeMillis();
        try {
            Message reply = p.request(new Message(topic, "unanswered".getBytes(StandardCharsets.UTF_8)), 3000);
            return "FAIL rr-timeout a reply came with no responder: " + reply;
        } catch (RequestTimeoutException e) {
            long ms = System.currentTimeMillis() - t0;
            return (ms < 8000 ? "OK" : "FAIL") + " rr-timeout RequestTimeoutException after " + ms + " ms: "
                + e.getMessage();
        } catch (Exception e) {
            System.out.println("# unanswered request: " + e);
            return null;
        }
    }

    private static void down(String ns, String topic, String cluster) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer("rr_requester_down");
        p.setNamesrvAddr(ns);
        p.setInstanceName("requester-down");
        p.setRetryTimesWhenSendFailed(0);
        p.start();
        String result = null;
        for (int i = 0; i < 3 && result == null; i++) {
            result = unanswered(p, topic);
        }
        System.out.println(result != null ? result : "FAIL rr-timeout the request could not be sent");
        Message req = new Message(topic, "from a requester that left".getBytes(StandardCharsets.UTF_8));
        MessageAccessor.putProperty(req, MessageConst.PROPERTY_CLUSTER, cluster);
        MessageAccessor.putProperty(req, MessageConst.PROPERTY_MESSAGE_REPLY_TO_CLIENT, "127.0.0.1@gone");
        MessageAccessor.putProperty(req, MessageConst.PROPERTY_CORRELATION_ID, "gone-1");
        MessageAccessor.putProperty(req, MessageConst.PROPERTY_MESSAGE_TTL, "3000");
        try {
            p.send(MessageUtil.createReplyMessage(req, "late".getBytes(StandardCharsets.UTF_8)), 5000);
            System.out.println("FAIL rr-gone a reply to a gone requester was acknowledged");
        } catch (Exception e) {
            Throwable c = e;
            while (c != null && !(c instanceof MQBrokerException)) {
                c = c.getCause();
            }
            MQBrokerException b = (MQBrokerException) c;
            boolean named = b != null && b.getResponseCode() == 1 && b.getErrorMessage() != null
                && b.getErrorMessage().contains("127.0.0.1@gone");
            System.out.println((named ? "OK" : "FAIL") + " rr-gone "
                + (b != null ? "code " + b.getResponseCode() + ": " + b.getErrorMessage() : e.toString()));
        }
        p.shutdown();
    }
}
