/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * control/server.c through the real wire protocol (ctl_wire.h), with a test
 * double of the nfnetlink side (its struct ctl_server_ops): echo_rcv() echoes every message back as
 * one datagram and then queues a second, "end" datagram, so the tests can see
 * that all answers are queued before DONE. A payload starting with "MCAST"
 * is multicast to group 7 instead, "BIG" is answered with its length, "FAIL"
 * returns -EINVAL and "QUIET" gets no answer. The
 * server runs on its own thread, as the control thread would.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/netlink.h>

#include "control_priv.h"
#include "ctl_wire.h"

#define MCAST_GROUP 7 /* NFNLGRP_NFTABLES */

/* ---- test double of nfnl.c ---- */

static struct {
	int rcv_calls;
	int closed;
	uint32_t portid;
	pid_t pid;
	char comm[32];
	bool privileged;
	bool ext_ack;
	bool cap_ack;
} seen;
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ctl_server *srv;

static int echo_rcv(struct nftdp_ctl *ctl, struct ctl_session *s, const void *buf, size_t len)
{
	static const char end[] = "end";

	(void)ctl;
	pthread_mutex_lock(&seen_lock);
	seen.rcv_calls++;
	seen.portid = ctl_session_portid(s);
	seen.pid = ctl_session_pid(s);
	snprintf(seen.comm, sizeof(seen.comm), "%s", ctl_session_comm(s));
	seen.privileged = ctl_session_privileged(s);
	seen.ext_ack = ctl_session_ext_ack(s);
	seen.cap_ack = ctl_session_cap_ack(s);
	pthread_mutex_unlock(&seen_lock);

	if (len >= 5 && !memcmp(buf, "MCAST", 5)) {
		ctl_server_multicast(srv, MCAST_GROUP, buf, len, s);
		return 0;
	}
	if (len >= 3 && !memcmp(buf, "BIG", 3)) {
		uint64_t n = len;

		return ctl_session_send(s, &n, sizeof(n));
	}
	if (len >= 4 && !memcmp(buf, "FAIL", 4))
		return -EINVAL;
	if (len >= 5 && !memcmp(buf, "QUIET", 5))
		return 0;
	ctl_session_send(s, buf, len);
	ctl_session_send(s, end, sizeof(end));
	return 0;
}

static void echo_closed(struct nftdp_ctl *ctl, struct ctl_session *s)
{
	(void)ctl;
	(void)s;
	pthread_mutex_lock(&seen_lock);
	seen.closed++;
	pthread_mutex_unlock(&seen_lock);
}

static const struct ctl_server_ops echo_ops = {.rcv = echo_rcv, .closed = echo_closed};

static int closed_count(void)
{
	int n;

	pthread_mutex_lock(&seen_lock);
	n = seen.closed;
	pthread_mutex_unlock(&seen_lock);
	return n;
}

/* Wait up to 5 s for the server to have closed at least n sessions. */
static bool wait_closed(int n)
{
	for (int i = 0; i < 500; i++) {
		if (closed_count() >= n)
			return true;
		usleep(10000);
	}
	return false;
}

/* ---- the server, on its own thread ---- */

static struct nftdp_ctl ctl;
static char dir[64];
static char sock_path[128];
static pthread_t thread;
static int stop;
static int poll_err; /* cmocka asserts only on the main thread */

static void *serve(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		int ret = ctl_server_poll(srv, 20);

		if (ret < 0 && ret != -EINTR)
			poll_err = ret;
	}
	return NULL;
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/nftdp-test-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	/* A missing parent directory is created. */
	snprintf(sock_path, sizeof(sock_path), "%s/run/nftdp/ctl.sock", dir);
	if (ctl_server_open(&ctl, sock_path, &echo_ops, &srv) < 0)
		return -1;
	stop = 0;
	return pthread_create(&thread, NULL, serve, NULL);
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(thread, NULL);
	ctl_server_close(srv);
	if (poll_err)
		return -1;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* ---- a wire client, as the shim does it ---- */

struct client {
	int stream;
	int nl; /* nft's end of the answer socketpair */
	uint32_t portid;
};

static int cl_connect(void)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = 5};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	strcpy(sun.sun_path, sock_path);
	assert_int_equal(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static void write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		assert_true(n > 0);
		p += n;
		len -= (size_t)n;
	}
}

/* 0, or -1 on EOF/error (the server closed the session). */
static int read_full(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void send_frame(int fd, uint32_t type, const void *payload, uint32_t len)
{
	struct ctl_wire_hdr hdr = {.type = type, .len = len};

	write_full(fd, &hdr, sizeof(hdr));
	if (len)
		write_full(fd, payload, len);
}

/* The DONE payload into out (outlen bytes); -1 when the session was closed. */
static int read_done(int fd, void *out, uint32_t outlen)
{
	struct ctl_wire_hdr hdr;

	if (read_full(fd, &hdr, sizeof(hdr)) < 0)
		return -1;
	assert_int_equal(hdr.type, CTL_WIRE_DONE);
	assert_int_equal(hdr.len, outlen);
	return read_full(fd, out, outlen);
}

static int32_t request(struct client *c, uint32_t type, const void *payload, uint32_t len)
{
	int32_t status;

	send_frame(c->stream, type, payload, len);
	assert_int_equal(read_done(c->stream, &status, sizeof(status)), 0);
	return status;
}

/* HELLO with an fd (or none when pass_fd is false); returns DONE's status. */
static int32_t cl_hello_raw(struct client *c, uint32_t version, bool pass_fd)
{
	struct ctl_wire_hello hello = {.version = version, .protocol = NETLINK_NETFILTER};
	struct ctl_wire_hdr hdr = {.type = CTL_WIRE_HELLO, .len = sizeof(hello)};
	struct ctl_wire_hello_done done;
	struct iovec iov[2] = {{&hdr, sizeof(hdr)}, {&hello, sizeof(hello)}};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct msghdr msg = {.msg_iov = iov, .msg_iovlen = 2};
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), 0);
	c->stream = cl_connect();
	if (pass_fd) {
		struct cmsghdr *cm = &cbuf.align;

		memset(&cbuf, 0, sizeof(cbuf));
		msg.msg_control = cbuf.buf;
		msg.msg_controllen = sizeof(cbuf.buf);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &sv[1], sizeof(int));
	}
	assert_int_equal(sendmsg(c->stream, &msg, MSG_NOSIGNAL),
			 (ssize_t)(sizeof(hdr) + sizeof(hello)));
	close(sv[1]);
	c->nl = sv[0];
	fcntl(c->nl, F_SETFL, O_NONBLOCK); /* as nft does */
	assert_int_equal(read_done(c->stream, &done, sizeof(done)), 0);
	c->portid = done.portid;
	return done.status;
}

static void cl_open(struct client *c)
{
	assert_int_equal(cl_hello_raw(c, NFTDP_CTL_WIRE_VERSION, true), 0);
}

static void cl_close(struct client *c)
{
	close(c->stream);
	close(c->nl);
}

/* One datagram from the answer socket, or -errno (-EAGAIN: none queued). */
static ssize_t cl_recv(struct client *c, void *buf, size_t len)
{
	ssize_t n = recv(c->nl, buf, len, MSG_DONTWAIT);

	return n < 0 ? -errno : n;
}

/* ---- tests ---- */

static void test_socket_file(void **state)
{
	struct ctl_server *other;
	struct stat st;
	char parent[160];

	(void)state;
	assert_int_equal(stat(sock_path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	/* anyone may connect, as anyone may open a netlink socket */
	assert_int_equal(st.st_mode & 07777, 0666);
	snprintf(parent, sizeof(parent), "%s/run/nftdp", dir);
	assert_int_equal(stat(parent, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	/* A live daemon on the path. */
	assert_int_equal(ctl_server_open(&ctl, sock_path, &echo_ops, &other), -EADDRINUSE);
}

static void test_stale_socket(void **state)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct ctl_server *s2;
	char path[160];
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s/stale.sock", dir);
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	close(fd); /* the file stays, nobody listens */
	assert_int_equal(ctl_server_open(&ctl, path, &echo_ops, &s2), 0);
	ctl_server_close(s2);
	assert_int_equal(access(path, F_OK), -1); /* close removes it */
}

/* The socket's directory: no symlink, nobody else may write it. */
static void test_socket_dir(void **state)
{
	struct ctl_server *s2;
	char real[96], link[128], path[160];

	(void)state;
	snprintf(real, sizeof(real), "%s/real", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(mkdir(real, 0755), 0);
	assert_int_equal(symlink(real, link), 0);
	snprintf(path, sizeof(path), "%s/x.sock", link);
	assert_int_equal(ctl_server_open(&ctl, path, &echo_ops, &s2), -ENOTDIR);
	assert_int_equal(chmod(real, 0775), 0);
	snprintf(path, sizeof(path), "%s/x.sock", real);
	assert_int_equal(ctl_server_open(&ctl, path, &echo_ops, &s2), -EPERM);
	assert_int_equal(chmod(real, 01777), 0); /* sticky, as /tmp */
	assert_int_equal(ctl_server_open(&ctl, path, &echo_ops, &s2), 0);
	ctl_server_close(s2);
	/* a symlink at the socket's own path is left alone, never followed */
	snprintf(link, sizeof(link), "%s/y.sock", real);
	assert_int_equal(symlink("/nonexistent-nftdp-target", link), 0);
	assert_int_equal(ctl_server_open(&ctl, link, &echo_ops, &s2), -EEXIST);
	assert_int_equal(access("/nonexistent-nftdp-target", F_OK), -1);
}

/* CAP_NET_ADMIN in our effective set, as the server reads it. */
static bool own_cap_net_admin(void)
{
	unsigned long long cap = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");
	bool found = false;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &cap) == 1)
			found = true;
	fclose(f);
	return found && (cap >> 12 & 1);
}

static void test_hello_portid(void **state)
{
	struct client a, b, c, d;
	int closed = closed_count();

	(void)state;
	cl_open(&a);
	assert_int_equal(a.portid, (uint32_t)getpid());
	cl_open(&b);
	assert_int_equal(b.portid, (uint32_t)-4097);
	cl_open(&c);
	assert_int_equal(c.portid, (uint32_t)-4098);
	cl_close(&a);
	assert_true(wait_closed(closed + 1));
	/* The pid is free again: the next socket gets it, as in the kernel. */
	cl_open(&d);
	assert_int_equal(d.portid, (uint32_t)getpid());
	cl_close(&b);
	cl_close(&c);
	cl_close(&d);
	assert_true(wait_closed(closed + 4));
}

static void test_hello_errors(void **state)
{
	struct client c;
	int32_t status;

	(void)state;
	assert_int_equal(cl_hello_raw(&c, NFTDP_CTL_WIRE_VERSION + 1, true), -EPROTO);
	cl_close(&c);
	assert_int_equal(cl_hello_raw(&c, NFTDP_CTL_WIRE_VERSION, false), -EBADF);
	/* Not helloed: an NLMSG closes the session. */
	send_frame(c.stream, CTL_WIRE_NLMSG, "x", 1);
	assert_int_equal(read_done(c.stream, &status, sizeof(status)), -1);
	cl_close(&c);
}

static void test_nlmsg_roundtrip(void **state)
{
	static const char req[] = "hello nf_tables";
	struct client c;
	char buf[256];
	int rcv_calls;

	(void)state;
	cl_open(&c);
	pthread_mutex_lock(&seen_lock);
	rcv_calls = seen.rcv_calls;
	pthread_mutex_unlock(&seen_lock);
	assert_int_equal(request(&c, CTL_WIRE_NLMSG, req, sizeof(req)), 0);
	/* Both answers are queued by the time DONE arrived: no waiting. */
	assert_int_equal(cl_recv(&c, buf, sizeof(buf)), sizeof(req));
	assert_memory_equal(buf, req, sizeof(req));
	assert_int_equal(cl_recv(&c, buf, sizeof(buf)), 4);
	assert_string_equal(buf, "end");
	assert_int_equal(cl_recv(&c, buf, sizeof(buf)), -EAGAIN);

	pthread_mutex_lock(&seen_lock);
	assert_int_equal(seen.rcv_calls, rcv_calls + 1);
	assert_int_equal(seen.portid, c.portid);
	assert_int_equal(seen.pid, getpid());
	assert_true(seen.comm[0] != '\0');
	assert_int_equal(seen.privileged, own_cap_net_admin());
	assert_false(seen.ext_ack);
	pthread_mutex_unlock(&seen_lock);

	/* The status ops->rcv returns is what DONE carries. */
	assert_int_equal(request(&c, CTL_WIRE_NLMSG, "FAIL", 4), -EINVAL);
	cl_close(&c);
}

static void test_sockopt_flags(void **state)
{
	struct ctl_wire_sockopt ext = {SOL_NETLINK, NETLINK_EXT_ACK, 1};
	struct ctl_wire_sockopt cap = {SOL_NETLINK, NETLINK_CAP_ACK, 1};
	struct ctl_wire_sockopt other = {SOL_NETLINK, NETLINK_NO_ENOBUFS, 1};
	struct ctl_wire_sockopt rcvbuf = {SOL_SOCKET, SO_RCVBUF, 4096};
	struct ctl_wire_sockopt badlevel = {SOL_SOCKET, SO_SNDBUF, 1};
	struct client c;
	char buf[64];

	(void)state;
	cl_open(&c);
	assert_int_equal(request(&c, CTL_WIRE_SOCKOPT, &ext, sizeof(ext)), 0);
	assert_int_equal(request(&c, CTL_WIRE_SOCKOPT, &cap, sizeof(cap)), 0);
	assert_int_equal(request(&c, CTL_WIRE_SOCKOPT, &other, sizeof(other)), 0);
	/* SO_RCVBUF goes to the daemon: it bounds queued notifications */
	assert_int_equal(request(&c, CTL_WIRE_SOCKOPT, &rcvbuf, sizeof(rcvbuf)), 0);
	assert_int_equal(request(&c, CTL_WIRE_SOCKOPT, &badlevel, sizeof(badlevel)), -ENOPROTOOPT);
	assert_int_equal(request(&c, CTL_WIRE_NLMSG, "x", 1), 0);
	pthread_mutex_lock(&seen_lock);
	assert_true(seen.ext_ack);
	assert_true(seen.cap_ack);
	pthread_mutex_unlock(&seen_lock);
	while (cl_recv(&c, buf, sizeof(buf)) > 0)
		;
	cl_close(&c);
}

static void test_multicast(void **state)
{
	struct ctl_wire_sockopt add = {SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, MCAST_GROUP};
	struct ctl_wire_sockopt drop = {SOL_NETLINK, NETLINK_DROP_MEMBERSHIP, MCAST_GROUP};
	struct ctl_wire_sockopt bad = {SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, 33};
	uint32_t mask = 1u << (MCAST_GROUP - 1);
	struct client member, bound, other, sender;
	char buf[64];

	(void)state;
	cl_open(&member);
	cl_open(&bound);
	cl_open(&other);
	cl_open(&sender);
	if (getuid() != 0) {
		/* nfnetlink: listening needs CAP_NET_ADMIN. */
		assert_int_equal(request(&member, CTL_WIRE_SOCKOPT, &add, sizeof(add)), -EPERM);
		assert_int_equal(request(&bound, CTL_WIRE_BIND, &mask, sizeof(mask)), -EPERM);
		goto out;
	}
	assert_int_equal(request(&member, CTL_WIRE_SOCKOPT, &add, sizeof(add)), 0);
	assert_int_equal(request(&member, CTL_WIRE_SOCKOPT, &bad, sizeof(bad)), -EINVAL);
	assert_int_equal(request(&bound, CTL_WIRE_BIND, &mask, sizeof(mask)), 0);
	/* The sender is a member too, but is skipped. */
	assert_int_equal(request(&sender, CTL_WIRE_SOCKOPT, &add, sizeof(add)), 0);

	assert_int_equal(request(&sender, CTL_WIRE_NLMSG, "MCAST 1", 7), 0);
	assert_int_equal(cl_recv(&member, buf, sizeof(buf)), 7);
	assert_memory_equal(buf, "MCAST 1", 7);
	assert_int_equal(cl_recv(&bound, buf, sizeof(buf)), 7);
	assert_int_equal(cl_recv(&other, buf, sizeof(buf)), -EAGAIN);
	assert_int_equal(cl_recv(&sender, buf, sizeof(buf)), -EAGAIN);
	assert_int_equal(cl_recv(&member, buf, sizeof(buf)), -EAGAIN);

	/* Leaving: DROP_MEMBERSHIP, and bind() with no groups. */
	assert_int_equal(request(&member, CTL_WIRE_SOCKOPT, &drop, sizeof(drop)), 0);
	mask = 0;
	assert_int_equal(request(&bound, CTL_WIRE_BIND, &mask, sizeof(mask)), 0);
	assert_int_equal(request(&other, CTL_WIRE_NLMSG, "MCAST 2", 7), 0);
	assert_int_equal(cl_recv(&member, buf, sizeof(buf)), -EAGAIN);
	assert_int_equal(cl_recv(&bound, buf, sizeof(buf)), -EAGAIN);
	assert_int_equal(cl_recv(&sender, buf, sizeof(buf)), 7);
out:
	cl_close(&member);
	cl_close(&bound);
	cl_close(&other);
	cl_close(&sender);
}

/* A frame dribbled in byte by byte is reassembled. */
static void test_partial_frames(void **state)
{
	static const char req[] = "partial";
	struct ctl_wire_hdr hdr = {.type = CTL_WIRE_NLMSG, .len = sizeof(req)};
	char frame[sizeof(hdr) + sizeof(req)];
	struct client c;
	int32_t status;
	char buf[64];

	(void)state;
	cl_open(&c);
	memcpy(frame, &hdr, sizeof(hdr));
	memcpy(frame + sizeof(hdr), req, sizeof(req));
	for (size_t i = 0; i < sizeof(frame); i++) {
		write_full(c.stream, frame + i, 1);
		usleep(1000);
	}
	assert_int_equal(read_done(c.stream, &status, sizeof(status)), 0);
	assert_int_equal(status, 0);
	assert_int_equal(cl_recv(&c, buf, sizeof(buf)), sizeof(req));
	assert_string_equal(buf, req);
	cl_close(&c);
}

/* A 50 MB batch, as nft sends for 100k rules. */
static void test_big_frame(void **state)
{
	size_t len = 50u * 1024 * 1024;
	char *big = malloc(len);
	struct client c;
	uint64_t n;

	(void)state;
	assert_non_null(big);
	memset(big, 'r', len);
	memcpy(big, "BIG", 3);
	cl_open(&c);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(request(&c, CTL_WIRE_NLMSG, big, (uint32_t)len), 0);
		assert_int_equal(cl_recv(&c, &n, sizeof(n)), sizeof(n));
		assert_int_equal(n, len);
	}
	/* and the session still serves small ones */
	assert_int_equal(request(&c, CTL_WIRE_NLMSG, "BIG", 3), 0);
	assert_int_equal(cl_recv(&c, &n, sizeof(n)), sizeof(n));
	assert_int_equal(n, 3);
	cl_close(&c);
	free(big);
}

static void expect_closed_by(const struct ctl_wire_hdr *hdr, const void *payload, size_t len)
{
	struct client bad, good;
	int32_t status;
	char buf[64];
	int closed = closed_count();

	cl_open(&good);
	cl_open(&bad);
	/* The server may close as soon as it sees the header: the payload's
	 * send can then fail (EPIPE), which is fine. */
	assert_int_equal(send(bad.stream, hdr, sizeof(*hdr), MSG_NOSIGNAL), sizeof(*hdr));
	if (len)
		(void)!send(bad.stream, payload, len, MSG_NOSIGNAL);
	assert_int_equal(read_done(bad.stream, &status, sizeof(status)), -1);
	assert_true(wait_closed(closed + 1));
	/* Only that session: the other one still works. */
	assert_int_equal(request(&good, CTL_WIRE_NLMSG, "ok", 2), 0);
	assert_int_equal(cl_recv(&good, buf, sizeof(buf)), 2);
	cl_close(&bad);
	cl_close(&good);
}

static void test_garbage_closes_session(void **state)
{
	struct ctl_wire_hdr unknown = {.type = 99, .len = 0};
	struct ctl_wire_hdr done = {.type = CTL_WIRE_DONE, .len = 4};
	struct ctl_wire_hdr huge = {.type = CTL_WIRE_NLMSG, .len = UINT32_MAX};
	struct ctl_wire_hdr badbind = {.type = CTL_WIRE_BIND, .len = 3};
	struct ctl_wire_hdr badopt = {.type = CTL_WIRE_SOCKOPT, .len = 100};
	struct ctl_wire_hdr hello2 = {.type = CTL_WIRE_HELLO, .len = sizeof(struct ctl_wire_hello)};
	struct ctl_wire_hello hello = {NFTDP_CTL_WIRE_VERSION, NETLINK_NETFILTER};
	char zeros[100] = {0};

	(void)state;
	expect_closed_by(&unknown, NULL, 0);
	expect_closed_by(&done, zeros, 4);
	expect_closed_by(&huge, NULL, 0);
	expect_closed_by(&badbind, zeros, 3);
	expect_closed_by(&badopt, zeros, 100);
	expect_closed_by(&hello2, &hello, sizeof(hello)); /* a second HELLO */
}

/* A session closed while its request is half sent, and a peer that closed
 * its answer socket: neither disturbs the server. */
static void test_abrupt_peers(void **state)
{
	struct ctl_wire_hdr hdr = {.type = CTL_WIRE_NLMSG, .len = 1000};
	struct client a, b, good;
	char buf[64];
	int closed = closed_count();

	(void)state;
	cl_open(&good);
	cl_open(&a);
	write_full(a.stream, &hdr, sizeof(hdr));
	write_full(a.stream, "abc", 3);
	cl_close(&a);
	cl_open(&b);
	close(b.nl); /* answers now fail (ECONNREFUSED), DONE still comes */
	assert_int_equal(request(&b, CTL_WIRE_NLMSG, "x", 1), 0);
	close(b.stream);
	assert_true(wait_closed(closed + 2));
	assert_int_equal(request(&good, CTL_WIRE_NLMSG, "ok", 2), 0);
	assert_int_equal(cl_recv(&good, buf, sizeof(buf)), 2);
	cl_close(&good);
}

#define PIPELINED 200000

static void *pipeline_writer(void *arg)
{
	struct client *c = arg;

	for (int i = 0; i < PIPELINED; i++)
		send_frame(c->stream, CTL_WIRE_NLMSG, "QUIET", 5);
	return NULL;
}

/* A client that sends without reading its DONEs fills its stream; the server
 * parks its DONE, stops reading it, and goes on serving everyone else. */
static void test_slow_reader(void **state)
{
	struct client slow, good;
	pthread_t writer;
	char buf[64];

	(void)state;
	cl_open(&slow);
	cl_open(&good);
	assert_int_equal(pthread_create(&writer, NULL, pipeline_writer, &slow), 0);
	usleep(200000); /* the writer is now blocked: both directions full */
	assert_int_equal(request(&good, CTL_WIRE_NLMSG, "ok", 2), 0);
	assert_int_equal(cl_recv(&good, buf, sizeof(buf)), 2);
	for (int i = 0; i < PIPELINED; i++) {
		int32_t status = 1;

		assert_int_equal(read_done(slow.stream, &status, sizeof(status)), 0);
		assert_int_equal(status, 0);
	}
	pthread_join(writer, NULL);
	cl_close(&slow);
	cl_close(&good);
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_socket_file),
		cmocka_unit_test(test_stale_socket),
		cmocka_unit_test(test_socket_dir),
		cmocka_unit_test(test_hello_portid),
		cmocka_unit_test(test_hello_errors),
		cmocka_unit_test(test_nlmsg_roundtrip),
		cmocka_unit_test(test_sockopt_flags),
		cmocka_unit_test(test_multicast),
		cmocka_unit_test(test_partial_frames),
		cmocka_unit_test(test_big_frame),
		cmocka_unit_test(test_garbage_closes_session),
		cmocka_unit_test(test_abrupt_peers),
		cmocka_unit_test(test_slow_reader),
	};
	/* clang-format on */

	return cmocka_run_group_tests(tests, setup, teardown);
}
