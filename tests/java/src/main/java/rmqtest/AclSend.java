/* AclSend: sends signed as ACL accounts, with the unmodified RocketMQ 4.9
 * Java client and its AclClientRPCHook, for
 * tests/java/run_mqadmin_acl_test.sh (one JVM for every send of the test):
 *
 *   AclSend NS TOPIC GROUP
 *
 * reads "ACCESSKEY SECRETKEY" lines from stdin; for each, the producer of
 * GROUP signing as that account (made on its first line, then kept with
 * its connections, so later sends show a live connection under a changed
 * policy) sends one message to TOPIC, and one line is printed: "SENT <msgId>" when the broker stored it, or "REFUSED
 * <responseCode> <the broker's message>" when it answered with an error
 * (no retries). Ends at the end of stdin. */
package rmqtest;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

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
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Map<String, DefaultMQProducer> producers = new HashMap<>();
        try {
            for (String line; (line = in.readLine()) != null;) {
                String[] key = line.trim().split(" ");
                DefaultMQProducer p = producers.get(line);
                if (p == null) {
                    p = producer(ns, group, key[0], key[1], producers.size());
                    producers.put(line, p);
                }
                System.out.println(send(p, topic, key[0]));
                System.out.flush();
            }
        } finally {
            for (DefaultMQProducer p : producers.values())
                p.shutdown();
        }
    }

    /* A started producer of group signing as accessKey. */
    private static DefaultMQProducer producer(String ns, String group, String accessKey, String secretKey, int n)
        throws MQClientException {
        AclClientRPCHook hook = new AclClientRPCHook(new SessionCredentials(accessKey, secretKey));
        DefaultMQProducer p = new DefaultMQProducer(group, hook);
        p.setNamesrvAddr(ns);
        p.setInstanceName("acl-" + n);
        p.setSendMsgTimeout(10000);
        p.setRetryTimesWhenSendFailed(0);
        p.start();
        return p;
    }

    private static String oneLine(String s) {
        return String.valueOf(s).replace('\n', ' ');
    }

    /* One send with p (signing as accessKey); the line to print. */
    private static String send(DefaultMQProducer p, String topic, String accessKey) throws Exception {
        try {
            SendResult r = p.send(new Message(topic, "TagA", ("acl-" + accessKey).getBytes(StandardCharsets.UTF_8)));
            return "SENT " + r.getMsgId();
        } catch (MQBrokerException e) {
            return "REFUSED " + e.getResponseCode() + " " + oneLine(e.getErrorMessage());
        } catch (MQClientException e) {
            Throwable why = e.getCause() != null ? e.getCause() : e;
            return "REFUSED " + e.getResponseCode() + " " + oneLine(why.getMessage());
        }
    }
}
