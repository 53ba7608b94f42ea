/* bench/floor.c: the floor of an HTTP/1.1 keep-alive client on Linux, nothing
 * but connect, read, write and epoll_wait: c connections, one GET in flight on
 * each, a response complete when its head and Content-Length bytes are in.
 * bench/bench.py builds it with gcc (cc -O2 -o floor floor.c) and runs it as
 * the tool "floor" beside gab in the plain keep-alive cells.
 *
 *   floor -n REQUESTS -c CONNECTIONS http://127.0.0.1:PORT/PATH
 *
 * Prints "requests N failed F seconds S rps R". IPv4 literals only; a response
 * without Content-Length, a closed connection or a full buffer ends the run
 * with exit status 1 (it is a floor, not a client). */
#define _GNU_SOURCE /* memmem */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { BUF = 1 << 16 };
struct conn { int fd; size_t have; char buf[BUF]; };

static char req[512];
static size_t reqlen;

static void die(const char *what) { perror(what); exit(1); }

/* complete returns the length of the response at the start of c->buf, or 0. */
static size_t complete(struct conn *c)
{
	char *end = memmem(c->buf, c->have, "\r\n\r\n", 4);
	if (!end) return 0;
	char *cl = memmem(c->buf, end - c->buf, "\r\nContent-Length:", 17);
	if (!cl) { fprintf(stderr, "floor: no Content-Length\n"); exit(1); }
	size_t n = (size_t)(end + 4 - c->buf) + strtoul(cl + 17, NULL, 10);
	return n <= c->have ? n : 0;
}

int main(int argc, char **argv)
{
	long n = 0, nc = 0, sent = 0, done = 0;
	int opt, port;
	char host[64], path[256] = "/";
	while ((opt = getopt(argc, argv, "n:c:")) != -1)
		if (opt == 'n') n = atol(optarg); else if (opt == 'c') nc = atol(optarg); else return 2;
	if (optind >= argc || n < 1 || nc < 1 || nc > n ||
	    sscanf(argv[optind], "http://%63[0-9.]:%d%255s", host, &port, path) < 2) {
		fprintf(stderr, "usage: floor -n REQUESTS -c CONNECTIONS http://IPv4:PORT/PATH\n");
		return 2;
	}
	reqlen = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s:%d\r\nAccept: */*\r\n\r\n", path, host, port);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	inet_pton(AF_INET, host, &sa.sin_addr);
	struct conn *cs = calloc(nc, sizeof *cs);
	int ep = epoll_create1(0), one = 1;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < nc; i++) {
		cs[i].fd = socket(AF_INET, SOCK_STREAM, 0);
		if (cs[i].fd < 0 || connect(cs[i].fd, (struct sockaddr *)&sa, sizeof sa) < 0) die("connect");
		setsockopt(cs[i].fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &cs[i] };
		epoll_ctl(ep, EPOLL_CTL_ADD, cs[i].fd, &ev);
		if (write(cs[i].fd, req, reqlen) != (ssize_t)reqlen) die("write");
		sent++;
	}
	struct epoll_event evs[256];
	while (done < n) {
		int k = epoll_wait(ep, evs, 256, -1);
		if (k < 0) die("epoll_wait");
		for (int i = 0; i < k; i++) {
			struct conn *c = evs[i].data.ptr;
			ssize_t r = read(c->fd, c->buf + c->have, BUF - c->have);
			if (r <= 0) die(r == 0 ? "read: closed by the server" : "read");
			c->have += r;
			size_t len = complete(c);
			if (!len) {
				if (c->have == BUF) { fprintf(stderr, "floor: response over %d bytes\n", BUF); return 1; }
				continue;
			}
			memmove(c->buf, c->buf + len, c->have - len);
			c->have -= len;
			done++;
			if (sent < n) {
				if (write(c->fd, req, reqlen) != (ssize_t)reqlen) die("write");
				sent++;
			}
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("requests %ld failed 0 seconds %.3f rps %.0f\n", done, s, done / s);
	return 0;
}
