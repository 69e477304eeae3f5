/* Producer: sends COUNT messages of TOPIC with a tag and a key through the
 * name servers NAMESRV ("host:port;host:port"), the way any RocketMQ
 * application does; prints one line per acknowledged message.
 *
 *   java -cp ... example.Producer NAMESRV TOPIC COUNT */
package example;

import java.nio.charset.StandardCharsets;

import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.message.Message;

public final class Producer {
    private Producer() {
    }

    public static void main(String[] args) throws Exception {
        DefaultMQProducer producer = new DefaultMQProducer("example_producer");
        producer.setNamesrvAddr(args[0]);
        producer.setSendMsgTimeout(10000);
        producer.start();
        int count = Integer.parseInt(args[2]);
        for (int i = 0; i < count; i++) {
            Message msg = new Message(args[1], "TagA", "order-" + i,
                    ("hello " + i).getBytes(StandardCharsets.UTF_8));
            SendResult r = producer.send(msg);
            System.out.println("SENT " + r.getMsgId() + " " + r.getSendStatus() + " "
                    + r.getMessageQueue().getBrokerName() + " hello " + i);
        }
        producer.shutdown();
    }
}
