/* mkdoc SIZE: writes the document of SIZE bytes to stdout (no header), for
 * the file-serving examples' data/doc-SIZE. */
#include "doc.h"

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mkdoc SIZE\n");
		return 2;
	}
	long size = strtol(argv[1], NULL, 10);
	char line[DOC_LINE];
	for (long i = 0; i * DOC_LINE < size; i++) {
		long left = size - i * DOC_LINE;
		doc_line(line, i);
		fwrite(line, 1, left < DOC_LINE ? (size_t)left : DOC_LINE, stdout);
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
