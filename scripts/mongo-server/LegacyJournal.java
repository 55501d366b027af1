import de.bwaldvogel.mongo.bson.Document;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.function.Consumer;

/**
 * Reads journals written before records had checksums: bare BSON documents end to end, no file
 * header. Such a file is replayed once and then converted (snapshot + fresh journal). Without
 * checksums only structural damage shows: a document that does not decode with data after it is
 * refused; a last document cut short is dropped, as in the current format.
 */
final class LegacyJournal {
    record Replayed(long records, long end, RecordReader.Torn torn) {}

    private LegacyJournal() {}

    static Replayed replay(FileChannel channel, Path journal, Consumer<Document> apply) throws IOException, JournalRefusal {
        long size = channel.size();
        long offset = 0;
        long records = 0;
        ByteBuffer lengthBytes = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
        while (offset < size) {
            long remaining = size - offset;
            if (remaining < 4) return new Replayed(records, offset, new RecordReader.Torn(offset, remaining, "an incomplete document length"));
            lengthBytes.clear();
            while (lengthBytes.hasRemaining() && channel.read(lengthBytes, offset + lengthBytes.position()) > 0) {}
            int length = lengthBytes.getInt(0);
            if (length < 5) throw JournalRefusal.damagedJournalRecord(journal, offset, "an impossible document length (" + length + ")", remaining, records);
            if (length > remaining)
                return new Replayed(records, offset, new RecordReader.Torn(offset, remaining, "a document cut short (" + length + " bytes announced, " + remaining + " present; this old format has no checksum to tell this from a damaged length)"));
            ByteBuffer bytes = ByteBuffer.allocate(length);
            while (bytes.hasRemaining() && channel.read(bytes, offset + bytes.position()) > 0) {}
            Document entry;
            try {
                entry = JournalFiles.decode(bytes.array());
                if (!(entry.get("db") instanceof String) || !(entry.get("cmd") instanceof String) || !(entry.get("q") instanceof Document))
                    throw new IllegalArgumentException("not a journal entry");
            } catch (RuntimeException e) {
                if (offset + length == size)
                    return new Replayed(records, offset, new RecordReader.Torn(offset, remaining, "a last document that does not decode"));
                throw JournalRefusal.damagedJournalRecord(journal, offset, "a document that does not decode (" + e.getMessage() + ")", remaining, records);
            }
            apply.accept(entry);
            offset += length;
            records++;
        }
        return new Replayed(records, offset, null);
    }
}
