import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

/**
 * The byte layout shared by the journal and the snapshot (all integers little-endian).
 *
 * File header (20 bytes): an 8-byte magic naming the kind of file, the generation (int64), and a
 * CRC32C of those 16 bytes. A snapshot of generation G holds the data as it was when journal G
 * started; journal G holds the writes made since.
 *
 * Record: payload length (int32), CRC32C of the length field, CRC32C of the length field and the
 * payload, then the payload (one BSON document). The length has a checksum of its own so that a
 * damaged length in the middle of a file is seen as damage, not mistaken for a record cut short
 * at the end of the file (which would drop every record after it).
 */
final class RecordFormat {
    static final byte[] JOURNAL_MAGIC = "SVCJRNL1".getBytes(StandardCharsets.US_ASCII);
    static final byte[] SNAPSHOT_MAGIC = "SVCSNAP1".getBytes(StandardCharsets.US_ASCII);
    static final int FILE_HEADER_BYTES = 20;
    static final int RECORD_HEADER_BYTES = 12;
    /** Larger than any record this server writes (BSON documents stop at 16 MiB; a snapshot batch at 4 MiB). */
    static final int MAX_PAYLOAD_BYTES = 64 * 1024 * 1024;

    private RecordFormat() {}

    static ByteBuffer fileHeader(byte[] magic, long generation) {
        ByteBuffer header = ByteBuffer.allocate(FILE_HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        header.put(magic).putLong(generation);
        header.putInt(crc(header.array(), 0, 16));
        return header.flip();
    }

    /** The generation in a header, or -1 when the header is not a valid one of this kind. */
    static long generationOf(ByteBuffer header, byte[] magic) {
        if (header.remaining() < FILE_HEADER_BYTES) return -1;
        byte[] bytes = new byte[FILE_HEADER_BYTES];
        header.duplicate().get(bytes);
        for (int i = 0; i < magic.length; i++) if (bytes[i] != magic[i]) return -1;
        ByteBuffer view = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        if (view.getInt(16) != crc(bytes, 0, 16)) return -1;
        return view.getLong(8);
    }

    static boolean startsWithMagic(ByteBuffer header, byte[] magic) {
        if (header.remaining() < magic.length) return false;
        for (int i = 0; i < magic.length; i++) if (header.get(header.position() + i) != magic[i]) return false;
        return true;
    }

    static ByteBuffer record(byte[] payload, int payloadLength) {
        ByteBuffer record = ByteBuffer.allocate(RECORD_HEADER_BYTES + payloadLength).order(ByteOrder.LITTLE_ENDIAN);
        record.putInt(payloadLength);
        record.putInt(crc(record.array(), 0, 4));
        CRC32C whole = new CRC32C();
        whole.update(record.array(), 0, 4);
        whole.update(payload, 0, payloadLength);
        record.putInt((int) whole.getValue());
        record.put(payload, 0, payloadLength);
        return record.flip();
    }

    static int crc(byte[] bytes, int offset, int length) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, offset, length);
        return (int) crc.getValue();
    }
}
