/* AdminFixture: what tests/java/run_mqadmin_test.sh needs on the cluster
 * before RocketMQ's mqadmin looks at it, made with the unmodified RocketMQ
 * 4.9 Java client:
 *
 *   AdminFixture NS TOPIC GROUP N STOPFILE
 *
 * sends N messages (tag TagA, key "adminkey", body "admin-<i>") and prints
 * "SENT <offsetMsgId> <queueId> <queueOffset>" for each; then a push
 * consumer of GROUP (CONSUME_FROM_FIRST_OFFSET, offsets committed every
 * second) consumes them, printing "GOT <body>" for each delivery (again
 * after an offset reset), and prints "CONSUMED <N>" once every one arrived;
 * producer and consumer stay connected (so producerConnection,
 * consumerConnection and consumerStatus list them) until STOPFILE exists,
 * then shut down cleanly. */
package rmqtest;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

public final class AdminFixture {
    private AdminFixture() {
    }

    public static void main(String[] args) throws Exception {
        String ns = args[0], topic = args[1], group = args[2];
        int n = Integer.parseInt(args[3]);
        File stop = new File(args[4]);

        DefaultMQProducer p = new DefaultMQProducer("rmq_admin_producer");
        p.setNamesrvAddr(ns);
        p.setInstanceName("admin-producer");
        p.setSendMsgTimeout(10000);
        p.start();
        for (int i = 0; i < n; i++) {
            Message m = new Message(topic, "TagA", "adminkey", ("admin-" + i).getBytes(StandardCharsets.UTF_8));
            SendResult r = p.send(m);
            System.out.println("SENT " + r.getOffsetMsgId() + " " + r.getMessageQueue().getQueueId() + " "
                + r.getQueueOffset());
        }
        System.out.flush();

        Set<String> seen = ConcurrentHashMap.newKeySet();
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group);
        c.setNamesrvAddr(ns);
        c.setInstanceName("admin-consumer");
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setPersistConsumerOffsetInterval(1000);
        c.subscribe(topic, "TagA || TagB");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                String body = new String(m.getBody(), StandardCharsets.UTF_8);
                seen.add(body);
                System.out.println("GOT " + body);
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        long deadline = System.currentTimeMillis() + 60000;
        while (seen.size() < n && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
        }
        System.out.println("CONSUMED " + seen.size());
        System.out.flush();
        deadline = System.currentTimeMillis() + 300000;
        while (!stop.exists() && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
        }
        c.shutdown();
        p.shutdown();
        System.exit(0);
    }
}
