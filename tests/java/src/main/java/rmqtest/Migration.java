/* Migration: the unmodified RocketMQ 4.9 Java client against a cluster
 * mixing rmq and Apache RocketMQ processes, for
 * tests/java/run_migration_test.sh. One phase per run:
 *
 *   produce NS TOPIC N      N sync sends (body "mig-<i>"), spread over the
 *                           route's queues by the client; prints
 *                           "SENT <uniqId> <status> <brokerName>" each.
 *   consume NS TOPIC GROUP N SECONDS
 *                           a push consumer (CONSUME_FROM_FIRST_OFFSET)
 *                           until N distinct messages arrived or SECONDS
 *                           passed; prints "RECV <uniqId> <brokerName>
 *                           <body>" per delivery (the broker the queue is on).
 *   route NS TOPIC          prints "ROUTE <brokerName> <masterAddr>" per
 *                           broker of the topic's route, from the name server. */
package rmqtest;

import java.nio.charset.StandardCharsets;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.protocol.route.BrokerData;
import org.apache.rocketmq.common.protocol.route.TopicRouteData;

public final class Migration {
    private Migration() {
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("produce")) {
            produce(args[1], args[2], Integer.parseInt(args[3]));
        } else if (args[0].equals("consume")) {
            consume(args[1], args[2], args[3], Integer.parseInt(args[4]), Integer.parseInt(args[5]));
        } else {
            route(args[1], args[2]);
        }
        System.exit(0);
    }

    private static void produce(String ns, String topic, int n) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer("rmq_migration_producer");
        p.setNamesrvAddr(ns);
        p.setInstanceName("mig-producer-" + ProcessHandle.current().pid());
        p.setSendMsgTimeout(10000);
        p.start();
        for (int i = 0; i < n; i++) {
            Message m = new Message(topic, "TagM", ("mig-" + i).getBytes(StandardCharsets.UTF_8));
            SendResult r = p.send(m);
            System.out.println("SENT " + r.getMsgId() + " " + r.getSendStatus() + " "
                + r.getMessageQueue().getBrokerName());
        }
        p.shutdown();
    }

    private static void consume(String ns, String topic, String group, int n, int seconds) throws Exception {
        DefaultMQPushConsumer c = PushUntil.consumer(ns, group, "mig-consumer-" + ProcessHandle.current().pid());
        PushUntil.run(c, topic, n, seconds, 2000, (m, ctx) ->
            System.out.println("RECV " + m.getMsgId() + " " + ctx.getMessageQueue().getBrokerName() + " "
                + new String(m.getBody(), StandardCharsets.UTF_8)));
    }

    private static void route(String ns, String topic) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer("rmq_migration_route");
        p.setNamesrvAddr(ns);
        p.setInstanceName("mig-route-" + ProcessHandle.current().pid());
        p.start();
        TopicRouteData rd = p.getDefaultMQProducerImpl().getmQClientFactory().getMQClientAPIImpl()
            .getTopicRouteInfoFromNameServer(topic, 5000);
        for (BrokerData bd : rd.getBrokerDatas()) {
            System.out.println("ROUTE " + bd.getBrokerName() + " " + bd.getBrokerAddrs().get(0L));
        }
        p.shutdown();
    }
}
