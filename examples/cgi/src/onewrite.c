/* onewrite: header and document built in one user-space buffer, sent with a
 * single write (resumed only if the kernel takes less). */
#include "doc.h"

int main(void)
{
	long size = doc_size();
	char *buf = malloc((size_t)size + 128 + DOC_LINE);
	if (buf == NULL)
		fail("malloc");
	int h = doc_header(buf, 128, size);
	char *p = buf + h;
	for (long i = 0; i * DOC_LINE < size; i++)
		doc_line(p + i * DOC_LINE, i);
	return write_all(1, buf, (size_t)h + (size_t)size) == 0 ? 0 : 1;
}
