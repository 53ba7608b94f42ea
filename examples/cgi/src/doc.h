/*
 * The document every example produces: SIZE bytes of 64-byte text lines,
 * "0000001 " followed by a rotating alphabet and '\n', the last line cut
 * short. SIZE comes from QUERY_STRING "size=N" or PATH_INFO "/N" (default
 * 1024). The file-serving examples read the same document from
 * data/doc-SIZE, written by mkdoc.
 */
#ifndef DOC_H
#define DOC_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>

#define DOC_LINE 64
#define DOC_MAX (64L << 20)

static inline long doc_size(void)
{
	const char *q = getenv("QUERY_STRING");
	const char *p = getenv("PATH_INFO");
	const char *s = NULL;
	if (q && (s = strstr(q, "size=")) != NULL && (s == q || s[-1] == '&'))
		s += 5;
	else if (p && p[0] == '/' && p[1] >= '0' && p[1] <= '9')
		s = p + 1;
	else
		return 1024;
	long n = strtol(s, NULL, 10);
	return n < 0 ? 0 : n > DOC_MAX ? DOC_MAX : n;
}

/* doc_line writes line i (0-based) into buf: DOC_LINE bytes, '\n' last. */
static inline void doc_line(char *buf, long i)
{
	long n = i + 1;
	for (int d = 6; d >= 0; d--) {
		buf[d] = (char)('0' + n % 10);
		n /= 10;
	}
	buf[7] = ' ';
	for (int k = 8; k < DOC_LINE - 1; k++)
		buf[k] = (char)('a' + (i + k) % 26);
	buf[DOC_LINE - 1] = '\n';
}

/* doc_header formats the CGI header block; it returns its length. */
static inline int doc_header(char *buf, size_t cap, long size)
{
	return snprintf(buf, cap, "Content-Type: text/plain\r\nContent-Length: %ld\r\n\r\n", size);
}

/* write_all writes n bytes to fd, resuming after short writes. */
static inline int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* fail answers 500 and exits non-zero, for a missing data file and the like. */
static inline void fail(const char *what)
{
	char buf[256];
	int n = snprintf(buf, sizeof buf, "Status: 500\r\nContent-Type: text/plain\r\n\r\n%s: %s\n", what, strerror(errno));
	write_all(1, buf, (size_t)n);
	exit(1);
}

#endif
