/* file: the document served from data/doc-SIZE, by one of three methods
 * chosen at build time: -DREADWRITE (read + write loop through an 8 KiB
 * buffer), -DMMAP (mmap + one write) or -DSENDFILE (sendfile, which copies
 * in the kernel). The header goes out with one write first. */
#include "doc.h"
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>

int main(void)
{
	long size = doc_size();
	char path[64], buf[8192];
	snprintf(path, sizeof path, "data/doc-%ld", size);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		fail(path);
	struct stat st;
	if (fstat(fd, &st) != 0)
		fail("fstat");
	int h = doc_header(buf, sizeof buf, (long)st.st_size);
	if (write_all(1, buf, (size_t)h) != 0)
		return 1;
#if defined(READWRITE)
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return 1;
		if (n == 0)
			break;
		if (write_all(1, buf, (size_t)n) != 0)
			return 1;
	}
#elif defined(MMAP)
	if (st.st_size > 0) {
		char *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED)
			return 1;
		if (write_all(1, p, (size_t)st.st_size) != 0)
			return 1;
	}
#elif defined(SENDFILE)
	off_t off = 0;
	while (off < st.st_size) {
		ssize_t n = sendfile(1, fd, &off, (size_t)(st.st_size - off));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 1;
	}
#else
#error "build with -DREADWRITE, -DMMAP or -DSENDFILE"
#endif
	return 0;
}
