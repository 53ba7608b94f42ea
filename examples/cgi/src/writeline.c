/* writeline: no buffering at all, one write system call per line. */
#include "doc.h"

int main(void)
{
	long size = doc_size();
	char buf[128], line[DOC_LINE];
	int h = doc_header(buf, sizeof buf, size);
	if (write_all(1, buf, (size_t)h) != 0)
		return 1;
	for (long i = 0; i * DOC_LINE < size; i++) {
		long left = size - i * DOC_LINE;
		doc_line(line, i);
		if (write_all(1, line, left < DOC_LINE ? (size_t)left : DOC_LINE) != 0)
			return 1;
	}
	return 0;
}
