/* AdminBatch: RocketMQ's unmodified admin tool (rocketmq-tools 4.9.7,
 * MQAdminStartup.main0, which signs with the account of
 * -Drocketmq.home.dir's conf/tools.yml) run for several commands in one
 * JVM, for tests/java/run_mqadmin_acl_test.sh:
 *
 *   AdminBatch DIR
 *
 * reads lines "NAME COMMAND ARGS..." (space-separated) from stdin, runs
 * mqadmin COMMAND ARGS... with its stdout in DIR/NAME.out and its stderr in
 * DIR/NAME.err, then prints "DONE NAME". Ends at the end of stdin. */
package rmqtest;

import java.io.BufferedReader;
import java.io.File;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import org.apache.rocketmq.tools.command.MQAdminStartup;

public final class AdminBatch {
    private AdminBatch() {
    }

    public static void main(String[] args) throws Exception {
        File dir = new File(args[0]);
        PrintStream out = System.out, err = System.err;
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null;) {
            String[] words = line.trim().split(" +");
            try (PrintStream o = new PrintStream(new FileOutputStream(new File(dir, words[0] + ".out")), true, "UTF-8");
                 PrintStream e = new PrintStream(new FileOutputStream(new File(dir, words[0] + ".err")), true, "UTF-8")) {
                System.setOut(o);
                System.setErr(e);
                MQAdminStartup.main0(Arrays.copyOfRange(words, 1, words.length), null);
            } finally {
                System.setOut(out);
                System.setErr(err);
            }
            out.println("DONE " + words[0]);
            out.flush();
        }
    }
}
