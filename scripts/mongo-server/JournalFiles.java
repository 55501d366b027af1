import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.wire.bson.BsonDecoder;
import de.bwaldvogel.mongo.wire.bson.BsonEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/** Names of the files beside a journal, entry encoding, and the fsync + atomic rename steps. */
final class JournalFiles {
    private JournalFiles() {}

    /** The files hold every user's data (phone numbers, code hashes): readable by their owner only. */
    private static final FileAttribute<?> OWNER_ONLY = PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));

    /** Creates (or empties) a temporary file, owner-only where the file system has POSIX permissions. */
    static FileChannel createTemporary(Path temporary) throws IOException {
        Set<StandardOpenOption> options = Set.of(StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE);
        try {
            return FileChannel.open(temporary, options, OWNER_ONLY);
        } catch (UnsupportedOperationException e) {
            return FileChannel.open(temporary, options);
        }
    }

    static Path snapshotOf(Path journal) {
        return journal.resolveSibling(journal.getFileName() + ".snapshot");
    }

    /** Where a file is written before it is renamed over the real one. */
    static Path temporaryOf(Path file) {
        return file.resolveSibling(file.getFileName() + ".tmp");
    }

    static byte[] encode(Document entry) {
        ByteBuf buf = Unpooled.buffer();
        try {
            BsonEncoder.encodeDocument(entry, buf);
            byte[] bytes = new byte[buf.readableBytes()];
            buf.readBytes(bytes);
            return bytes;
        } finally {
            buf.release();
        }
    }

    static Document decode(byte[] payload) {
        return BsonDecoder.decodeBson(Unpooled.wrappedBuffer(payload));
    }

    static void writeFully(FileChannel channel, ByteBuffer bytes) throws IOException {
        while (bytes.hasRemaining()) channel.write(bytes);
    }

    /** Writes a fresh journal holding only its header, on disk before it replaces `journal`. */
    static void createJournal(Path journal, long generation) throws IOException {
        Path temporary = temporaryOf(journal);
        try (FileChannel channel = createTemporary(temporary)) {
            writeFully(channel, RecordFormat.fileHeader(RecordFormat.JOURNAL_MAGIC, generation));
            channel.force(true);
        }
        replaceAtomically(temporary, journal);
    }

    /** Renames a complete, fsynced file over the real one, then makes the rename itself durable. */
    static void replaceAtomically(Path temporary, Path target) throws IOException {
        Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        fsyncDirectory(target.toAbsolutePath().getParent());
    }

    static void fsyncDirectory(Path directory) throws IOException {
        try (FileChannel channel = FileChannel.open(directory, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }
}
