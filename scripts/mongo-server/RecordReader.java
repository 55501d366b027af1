import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.util.zip.CRC32C;

/**
 * Reads the records of a journal or snapshot one by one and tells a whole record from the end of
 * the file, from a last record a crash cut short (torn), and from damage with data after it.
 *
 * Torn, and so safe to drop: a last record whose header or payload is incomplete, or whose bytes
 * fail their checksum with nothing but zero bytes (or nothing) after them — what a crash or power
 * cut leaves at the end of a file being appended to. Everything else that fails a check is damage.
 */
final class RecordReader {
    sealed interface Result permits Record, End, Torn, Damaged {}

    record Record(long offset, byte[] payload) implements Result {}

    record End(long offset) implements Result {}

    record Torn(long offset, long droppedBytes, String reason) implements Result {}

    record Damaged(long offset, String reason) implements Result {}

    private final FileChannel channel;
    private final long size;
    private final InputStream in;
    private long position;

    RecordReader(FileChannel channel, long start) throws IOException {
        this.channel = channel;
        this.size = channel.size();
        channel.position(start);
        this.in = new BufferedInputStream(Channels.newInputStream(channel), 1 << 20);
        this.position = start;
    }

    Result next() throws IOException {
        long offset = position;
        long remaining = size - offset;
        if (remaining == 0) return new End(offset);
        if (remaining < RecordFormat.RECORD_HEADER_BYTES)
            return new Torn(offset, remaining, "an incomplete record header (" + remaining + " bytes)");
        ByteBuffer header = ByteBuffer.wrap(read(RecordFormat.RECORD_HEADER_BYTES)).order(ByteOrder.LITTLE_ENDIAN);
        int length = header.getInt(0);
        if (header.getInt(4) != RecordFormat.crc(header.array(), 0, 4)) {
            if (zeroFrom(offset)) return new Torn(offset, remaining, "zero bytes where a record should start (space allotted, never written)");
            return new Damaged(offset, "the record's length field fails its checksum");
        }
        if (length < 0 || length > RecordFormat.MAX_PAYLOAD_BYTES)
            return new Damaged(offset, "the record announces an impossible length (" + length + " bytes)");
        long end = offset + RecordFormat.RECORD_HEADER_BYTES + length;
        if (end > size)
            return new Torn(offset, remaining, "a record cut short (" + length + " bytes announced, " + (remaining - RecordFormat.RECORD_HEADER_BYTES) + " present)");
        byte[] payload = read(length);
        CRC32C crc = new CRC32C();
        crc.update(header.array(), 0, 4);
        crc.update(payload, 0, length);
        if (header.getInt(8) != (int) crc.getValue()) {
            if (zeroFrom(end)) return new Torn(offset, remaining, "a last record whose bytes fail their checksum (its write did not complete)");
            return new Damaged(offset, "the record fails its checksum");
        }
        return new Record(offset, payload);
    }

    private byte[] read(int length) throws IOException {
        byte[] bytes = in.readNBytes(length);
        if (bytes.length != length) throw new IOException("file shrank while being read at offset " + position);
        position += length;
        return bytes;
    }

    /** Whether every byte from `from` to the end of the file is zero (true when there are none). */
    private boolean zeroFrom(long from) throws IOException {
        ByteBuffer chunk = ByteBuffer.allocate(1 << 16);
        for (long at = from; at < size; ) {
            chunk.clear();
            int read = channel.read(chunk, at);
            if (read <= 0) return true;
            for (int i = 0; i < read; i++) if (chunk.get(i) != 0) return false;
            at += read;
        }
        return true;
    }
}
