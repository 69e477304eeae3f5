/* AclSend: one send signed as an ACL account, with the unmodified RocketMQ
 * 4.9 Java client and its AclClientRPCHook, for
 * tests/java/run_mqadmin_acl_test.sh:
 *
 *   AclSend NS TOPIC GROUP ACCESSKEY SECRETKEY
 *
 * prints "SENT <msgId>" when the broker stored the message, or "REFUSED
 * <responseCode> <the broker's message>" when it answered with an error
 * (no retries). */
package rmqtest;

import java.nio.charset.StandardCharsets;

import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.message.Message;

public final class AclSend {
    private AclSend() {
    }

    public static void main(String[] args) throws Exception {
        String ns = args[0], topic = args[1], group = args[2];
        AclClientRPCHook hook = new AclClientRPCHook(new SessionCredentials(args[3], args[4]));
        DefaultMQProducer p = new DefaultMQProducer(group, hook);
        p.setNamesrvAddr(ns);
        p.setInstanceName("acl-" + System.nanoTime());
        p.setSendMsgTimeout(10000);
        p.setRetryTimesWhenSendFailed(0);
        p.start();
        try {
            SendResult r = p.send(new Message(topic, "TagA", ("acl-" + args[3]).getBytes(StandardCharsets.UTF_8)));
            System.out.println("SENT " + r.getMsgId());
        } catch (MQBrokerException e) {
            System.out.println("REFUSED " + e.getResponseCode() + " " + e.getErrorMessage());
        } catch (MQClientException e) {
            Throwable why = e.getCause() != null ? e.getCause() : e;
            System.out.println("REFUSED " + e.getResponseCode() + " " + why.getMessage());
        } finally {
            p.shutdown();
        }
    }
}
