// DumpV2Descriptors: writes the file descriptors of apache/rocketmq-apis'
// service.proto and definition.proto, as embedded in the classes of the
// rocketmq-proto jar, with every file they import (google/protobuf/...), as a
// google.protobuf.FileDescriptorSet in dependency order: what protoc reads
// with --descriptor_set_in in tests/proto/check_v2_wire.sh.
package rmqtest;

import apache.rocketmq.v2.MQDomain;
import apache.rocketmq.v2.MQService;
import com.google.protobuf.DescriptorProtos.FileDescriptorSet;
import com.google.protobuf.Descriptors.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.LinkedHashSet;
import java.util.Set;

public final class DumpV2Descriptors {
    private DumpV2Descriptors() {
    }

    /** Adds FILE after the files it imports, each file once. */
    private static void addWithImports(FileDescriptor file, Set<FileDescriptor> ordered) {
        if (ordered.contains(file)) {
            return;
        }
        for (FileDescriptor dependency : file.getDependencies()) {
            addWithImports(dependency, ordered);
        }
        ordered.add(file);
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: DumpV2Descriptors OUTPUT.pb");
            System.exit(2);
        }
        Set<FileDescriptor> ordered = new LinkedHashSet<>();
        addWithImports(MQDomain.getDescriptor(), ordered);
        addWithImports(MQService.getDescriptor(), ordered);
        FileDescriptorSet.Builder set = FileDescriptorSet.newBuilder();
        for (FileDescriptor file : ordered) {
            set.addFile(file.toProto());
        }
        try (OutputStream out = new FileOutputStream(args[0])) {
            set.build().writeTo(out);
        }
    }
}
