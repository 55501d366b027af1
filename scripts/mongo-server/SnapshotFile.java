import de.bwaldvogel.mongo.bson.Document;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The snapshot: the whole data set as write commands (create, createIndexes, batched inserts) in
 * checksummed records, closed by an end record that counts them, so a cut-short snapshot is
 * never taken for a complete one. Loading it is replaying those commands.
 */
final class SnapshotFile {
    interface EntrySink {
        void accept(Document entry) throws IOException;
    }

    interface EntrySource {
        void writeTo(EntrySink sink) throws IOException;
    }

    interface EntryApplier {
        /** Applies one entry; returns an error text when it failed, else null. */
        String apply(Document entry);
    }

    record Loaded(long generation, long records, long bytes) {}

    private SnapshotFile() {}

    /** Writes the snapshot to a temporary file, fsyncs it, renames it into place; returns its size. */
    static long write(Path snapshot, long generation, EntrySource source) throws IOException {
        Path temporary = JournalFiles.temporaryOf(snapshot);
        long[] records = {0};
        try (FileChannel channel = JournalFiles.createTemporary(temporary)) {
            OutputStream out = new BufferedOutputStream(Channels.newOutputStream(channel), 1 << 20);
            writeBuffer(out, RecordFormat.fileHeader(RecordFormat.SNAPSHOT_MAGIC, generation));
            source.writeTo(entry -> {
                byte[] payload = JournalFiles.encode(entry);
                writeBuffer(out, RecordFormat.record(payload, payload.length));
                records[0]++;
            });
            byte[] end = JournalFiles.encode(new Document("end", records[0]));
            writeBuffer(out, RecordFormat.record(end, end.length));
            out.flush();
            channel.force(true);
        }
        long size = Files.size(temporary);
        JournalFiles.replaceAtomically(temporary, snapshot);
        return size;
    }

    private static void writeBuffer(OutputStream out, ByteBuffer buffer) throws IOException {
        out.write(buffer.array(), buffer.arrayOffset() + buffer.position(), buffer.remaining());
    }

    /** Applies every entry of the snapshot; refuses one that is damaged, incomplete or fails. */
    static Loaded load(Path snapshot, Path journal, EntryApplier applier) throws IOException, JournalRefusal {
        try (FileChannel channel = FileChannel.open(snapshot, StandardOpenOption.READ)) {
            ByteBuffer header = ByteBuffer.allocate(RecordFormat.FILE_HEADER_BYTES);
            while (header.hasRemaining() && channel.read(header) > 0) {}
            header.flip();
            long generation = RecordFormat.generationOf(header, RecordFormat.SNAPSHOT_MAGIC);
            if (generation < 0) throw JournalRefusal.damagedSnapshot(snapshot, journal, 0, "its header is missing or fails its checksum");
            RecordReader reader = new RecordReader(channel, RecordFormat.FILE_HEADER_BYTES);
            long records = 0;
            while (true) {
                RecordReader.Result result = reader.next();
                if (result instanceof RecordReader.Record record) {
                    Document entry = JournalFiles.decode(record.payload());
                    if (entry.containsKey("end")) {
                        long expected = ((Number) entry.get("end")).longValue();
                        if (expected != records)
                            throw JournalRefusal.damagedSnapshot(snapshot, journal, record.offset(), "its end record counts " + expected + " records, " + records + " were read");
                        long end = record.offset() + RecordFormat.RECORD_HEADER_BYTES + record.payload().length;
                        if (end != channel.size())
                            throw JournalRefusal.damagedSnapshot(snapshot, journal, end, "bytes follow its end record");
                        return new Loaded(generation, records, channel.size());
                    }
                    String error = applier.apply(entry);
                    if (error != null) throw JournalRefusal.snapshotEntryFailed(snapshot, record.offset(), error);
                    records++;
                } else if (result instanceof RecordReader.End end) {
                    throw JournalRefusal.damagedSnapshot(snapshot, journal, end.offset(), "it ends before its end record (cut short)");
                } else if (result instanceof RecordReader.Torn torn) {
                    throw JournalRefusal.damagedSnapshot(snapshot, journal, torn.offset(), "it is cut short: " + torn.reason());
                } else if (result instanceof RecordReader.Damaged damaged) {
                    throw JournalRefusal.damagedSnapshot(snapshot, journal, damaged.offset(), damaged.reason());
                }
            }
        }
    }
}
