import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * The server's stderr as a file of bounded size: slf4j-simple's warnings and errors (it prints to
 * System.err) and any stack trace the server prints. A server started by `npm start` runs detached
 * for days after the process that started it has gone, so nothing reads a pipe; and a client that
 * keeps sending what the server logs must not fill the disk. Past maxBytes the file becomes
 * `<file>.1` (replacing the older one) and a new file starts, so at most twice maxBytes is kept. At
 * start the previous run's file becomes `<file>.1` too: what a crashed server said survives its
 * restart.
 */
final class RotatingServerLog extends OutputStream {
    /** The lines may quote stored documents (phone numbers, addresses): readable by their owner only. */
    private static final FileAttribute<?> OWNER_ONLY = PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));

    private final Path file;
    private final Path previous;
    private final long maxBytes;
    private OutputStream out;
    private long written;

    private RotatingServerLog(Path file, long maxBytes) throws IOException {
        this.file = file;
        this.previous = file.resolveSibling(file.getFileName() + ".1");
        this.maxBytes = maxBytes;
        rotate();
    }

    /**
     * Sends System.err to the file; slf4j-simple reads System.err at each line, so it follows. A
     * file that cannot be made (a read-only `.local`) is no reason not to serve: System.err stays,
     * and says so.
     */
    static void redirectStderr(Path file, long maxBytes) {
        try {
            if (file.getParent() != null) Files.createDirectories(file.getParent());
            System.setErr(new PrintStream(new RotatingServerLog(file, maxBytes), true, StandardCharsets.UTF_8));
        } catch (IOException | RuntimeException e) {
            System.err.println("local MongoDB-wire server: cannot write its log to " + file + " (" + e + "); it logs to stderr");
            System.err.flush();
        }
    }

    @Override
    public synchronized void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public synchronized void write(byte[] bytes, int offset, int length) throws IOException {
        // Only between writes: slf4j-simple prints a line in one write (a long stack trace may take a few).
        if (written > 0 && written + length > maxBytes) rotate();
        out.write(bytes, offset, length);
        written += length;
    }

    @Override
    public synchronized void flush() throws IOException {
        out.flush();
    }

    @Override
    public synchronized void close() throws IOException {
        out.close();
    }

    private void rotate() throws IOException {
        if (out != null) out.close();
        if (Files.exists(file)) Files.move(file, previous, StandardCopyOption.REPLACE_EXISTING);
        Set<StandardOpenOption> options = Set.of(StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE);
        FileChannel channel;
        try {
            channel = FileChannel.open(file, options, OWNER_ONLY);
        } catch (UnsupportedOperationException e) {
            channel = FileChannel.open(file, options);
        }
        out = Channels.newOutputStream(channel);
        written = 0;
    }
}
