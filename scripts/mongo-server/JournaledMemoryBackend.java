import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.wire.bson.BsonDecoder;
import de.bwaldvogel.mongo.wire.bson.BsonEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.embedded.EmbeddedChannel;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.Set;

/**
 * The memory backend (with its `_id` index use) made durable by a write-ahead journal: every
 * write command is appended to a file before its answer goes back, and replayed in order at start.
 *
 * Why not mongo-java-server's H2 backend: it does not enforce sparse unique indexes (the service
 * relies on them for race safety) and commits about once a second, so a kill -9 loses the last
 * second of writes it acknowledged. Here a write is applied and journaled under one lock, so the
 * journal's order is the order writes took effect and a replay rebuilds the same data (a command
 * that failed fails again the same way). The append is a write to the operating system, not an
 * fsync: a crash of this process loses nothing it acknowledged, a power cut may lose the last
 * writes. Not replayed identically: values the server itself makes up (an upsert's ObjectId when
 * the filter names no `_id`, `$currentDate`); the service sets its own ids and dates.
 */
public final class JournaledMemoryBackend extends IdIndexedMemoryBackend {
    private static final Set<String> WRITES = Set.of(
            "insert", "update", "delete", "findandmodify", "create", "createindexes", "drop",
            "dropdatabase", "dropindexes", "renamecollection");

    private final Object writeLock = new Object();
    private final FileChannel journal;

    public JournaledMemoryBackend(Path file) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        this.journal = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        long replayed = replay();
        // A record cut short by a crash mid-append was never acknowledged: drop it.
        journal.truncate(replayed);
        journal.position(replayed);
    }

    @Override
    public Document handleCommand(Channel channel, String databaseName, String command, Document query) {
        String name = command.toLowerCase(Locale.ROOT);
        if (!WRITES.contains(name)) return super.handleCommand(channel, databaseName, command, query);
        synchronized (writeLock) {
            Document result = null;
            try {
                result = super.handleCommand(channel, databaseName, command, query);
                return result;
            } finally {
                // Also when it failed: an unordered insert may have stored some documents.
                if (!changedNothing(name, result)) append(databaseName, command, query);
            }
        }
    }

    /**
     * An update or delete that matched nothing left the data as it was: replaying it would only
     * cost time (the sweeper's periodic conditional updates are mostly such).
     */
    private static boolean changedNothing(String command, Document result) {
        if (result == null || result.containsKey("writeErrors") || result.containsKey("upserted")) return false;
        Object n;
        if (command.equals("update") || command.equals("delete")) n = result.get("n");
        else if (command.equals("findandmodify") && result.get("lastErrorObject") instanceof Document lastError) n = lastError.get("n");
        else return false;
        return n instanceof Number count && count.intValue() == 0;
    }

    private void append(String databaseName, String command, Document query) {
        Document entry = new Document("db", databaseName).append("cmd", command).append("q", query);
        ByteBuf buf = Unpooled.buffer();
        try {
            BsonEncoder.encodeDocument(entry, buf);
            ByteBuffer bytes = buf.nioBuffer();
            while (bytes.hasRemaining()) journal.write(bytes);
        } catch (IOException e) {
            throw new UncheckedIOException("journal append failed", e);
        } finally {
            buf.release();
        }
    }

    /** Applies every whole record; returns the offset after the last one. */
    private long replay() throws IOException {
        long size = journal.size();
        long offset = 0;
        long applied = 0;
        Channel channel = new EmbeddedChannel();
        ByteBuffer lengthBytes = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
        while (offset + 4 <= size) {
            lengthBytes.clear();
            journal.read(lengthBytes, offset);
            int length = lengthBytes.getInt(0);
            if (length < 5 || offset + length > size) break;
            ByteBuffer record = ByteBuffer.allocate(length);
            while (record.hasRemaining()) journal.read(record, offset + record.position());
            record.flip();
            Document entry;
            try {
                entry = BsonDecoder.decodeBson(Unpooled.wrappedBuffer(record));
            } catch (RuntimeException e) {
                break;
            }
            try {
                super.handleCommand(channel, (String) entry.get("db"), (String) entry.get("cmd"), (Document) entry.get("q"));
            } catch (RuntimeException e) {
                // It failed the same way when it was first run (duplicate key and the like).
            }
            offset += length;
            applied++;
        }
        System.out.println("journal replayed " + applied + " writes");
        return offset;
    }

    @Override
    public void close() {
        super.close();
        try {
            journal.close();
        } catch (IOException e) {
            // Closing at exit: nothing left to do with it.
        }
    }
}
