import java.io.IOException;
import java.nio.channels.FileChannel;
import java.util.Locale;

/**
 * When journal appends reach the disk (fsync), per LOCAL_MONGO_FSYNC:
 * - `always`: a write is answered only once it is on disk. Writers waiting at the same time share
 *   one fsync (group commit), so concurrency hides part of its cost;
 * - `everysec`: a background thread fsyncs once a second; a power cut loses at most about the
 *   last second of acknowledged writes, a crash of the process nothing;
 * - `off`: the operating system writes when it likes (a power cut may lose more).
 * Compaction always fsyncs the files it writes, whatever the mode.
 */
final class JournalSync {
    enum Mode {
        ALWAYS, EVERYSEC, OFF;

        static Mode parse(String value) {
            for (Mode mode : values()) if (mode.name().toLowerCase(Locale.ROOT).equals(value)) return mode;
            throw new IllegalArgumentException("LOCAL_MONGO_FSYNC must be always, everysec or off (got '" + value + "')");
        }
    }

    private final Mode mode;
    private final Object lock = new Object();
    private FileChannel channel;
    /** Bytes appended since start, over every journal file (so a compaction does not reset them). */
    private volatile long appended;
    private long synced;
    private boolean closed;

    JournalSync(Mode mode) {
        this.mode = mode;
        if (mode == Mode.EVERYSEC) {
            Thread thread = new Thread(this::syncEverySecond, "journal-fsync");
            thread.setDaemon(true);
            thread.start();
        }
    }

    Mode mode() {
        return mode;
    }

    /** Called under the write lock after bytes were appended; returns the new total. */
    long appended(long bytes) {
        appended += bytes;
        return appended;
    }

    /** The journal now written to; everything before it is in an fsynced snapshot. */
    void switchTo(FileChannel next) {
        synchronized (lock) {
            channel = next;
            synced = appended;
        }
    }

    /** In `always` mode, returns once the journal is on disk up to `total` appended bytes. */
    void awaitDurable(long total) throws IOException {
        if (mode == Mode.ALWAYS) syncUpTo(total);
    }

    void syncAll() throws IOException {
        syncUpTo(appended);
    }

    private void syncUpTo(long total) throws IOException {
        synchronized (lock) {
            if (synced >= total || channel == null) return;
            // Everything appended so far is covered, including writes of waiters queued behind us.
            long target = appended;
            channel.force(false);
            synced = target;
        }
    }

    /** At shutdown: a last fsync (unless `off`), then no more (the background thread stops). */
    void close() throws IOException {
        synchronized (lock) {
            if (channel != null && mode != Mode.OFF) channel.force(false);
            channel = null;
            closed = true;
        }
    }

    private void syncEverySecond() {
        while (true) {
            try {
                Thread.sleep(1000);
                synchronized (lock) {
                    if (closed) return;
                }
                syncAll();
            } catch (InterruptedException e) {
                return;
            } catch (IOException e) {
                JournaledMemoryBackend.halt("journal fsync failed: " + e);
            }
        }
    }
}
