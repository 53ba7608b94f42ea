/* stdio: the document through stdout with stdio's default buffering
 * (full buffering on a pipe, st_blksize bytes), or, built with -DBUFSZ=N,
 * with setvbuf(stdout, NULL, _IOFBF, N). One fwrite per line. */
#include "doc.h"

int main(void)
{
#ifdef BUFSZ
	if (setvbuf(stdout, NULL, _IOFBF, BUFSZ) != 0)
		fail("setvbuf");
#endif
	long size = doc_size();
	char line[DOC_LINE];
	printf("Content-Type: text/plain\r\nContent-Length: %ld\r\n\r\n", size);
	for (long i = 0; i * DOC_LINE < size; i++) {
		long left = size - i * DOC_LINE;
		doc_line(line, i);
		fwrite(line, 1, left < DOC_LINE ? (size_t)left : DOC_LINE, stdout);
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
