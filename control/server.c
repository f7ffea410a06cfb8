/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control socket: one unix SOCK_STREAM session per netlink socket that
 * the shim (control/shim/shim.c) emulates, speaking ctl_wire.h. server.c owns
 * the transport only -- framing, credentials, port ids, group membership and
 * the answer fd -- and hands every sendmsg's bytes up through ops->rcv
 * (ctl_nfnl_rcv() of nfnl.c in the daemon).
 * The port id and membership rules mirror net/netlink/af_netlink.c
 * (netlink_autobind, netlink_setsockopt, netlink_bind).
 *
 * Nothing here may block on one client: the listening socket and every
 * session stream are non-blocking, answers are sent MSG_DONTWAIT (a full peer
 * queue loses the answer with -ENOBUFS, as a kernel socket does), and a DONE
 * the peer is too slow to read is parked in the session until EPOLLOUT, with
 * no further frame of that session processed meanwhile.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <linux/sockios.h>

#include "control_priv.h"
#include "ctl_wire.h"

#define CTL_RBUF_MIN (64u * 1024)
/* Largest frame we accept. nft's biggest batches are ~50 MB (100k rules). */
#define CTL_FRAME_MAX (256u * 1024 * 1024)
/* Keep an idle session's buffer small again after a big batch. */
#define CTL_RBUF_KEEP (1024u * 1024)
/* What the answer fd's send buffer is raised to: the answers of one batch
 * (every error and echo) must fit before DONE is written. */
#define CTL_ANSWER_SNDBUF (1 << 30)
/* Read calls per epoll event: bounds the time one busy client gets. */
#define CTL_READS_PER_EVENT 64
#define CTL_EVENTS 64
/* The socket file: anyone may connect, as anyone may open a netlink socket. */
#define CTL_SOCKET_MODE 0666
/* The kernel's first collision port id (netlink_autobind's rover). */
#define CTL_ROVER_START (-4097)

struct ctl_session {
	struct ctl_server *srv;
	struct ctl_session *next;
	struct ctl_session **pprev;
	int fd;		/* the stream to the shim */
	int dgram_fd;	/* where answers go; -1 until HELLO */
	int pending_fd; /* received by SCM_RIGHTS, not yet claimed by HELLO */
	bool hello_done;
	bool privileged;
	bool ext_ack;
	bool cap_ack;
	bool out_wait;	 /* waiting for EPOLLOUT to flush out[] */
	bool no_enobufs; /* NETLINK_NO_ENOBUFS */
	bool bcast_err;	 /* NETLINK_BROADCAST_ERROR: its events wait, not drop */
	bool overrun;	 /* notifications dropped, ENOBUFS not yet queued */
	int rcvbuf;	 /* sk_rcvbuf: what queued notifications may hold */
	/* the rest of a dump the peer's queue had no room for, as records
	 * {u32 len, datagram}; fed as the peer reads (netlink_dump) */
	uint8_t *bl;
	size_t bl_off, bl_len, bl_cap;
	uint32_t portid;
	uint32_t groups; /* bit n-1 = group n, as nlk->groups[0] */
	pid_t pid;
	uid_t uid;
	char comm[32];
	uint8_t *rbuf;
	size_t rbuf_size; /* capacity */
	size_t rbuf_used; /* bytes received, from rbuf[0] */
	uint8_t out[sizeof(struct ctl_wire_hdr) + sizeof(struct ctl_wire_hello_done)];
	size_t out_off;
	size_t out_used;
};

struct ctl_server {
	struct nftdp_ctl *ctl;
	struct ctl_server_ops ops;
	int listen_fd;
	int epoll_fd;
	char *path;
	dev_t dev; /* of the socket file we created, to unlink only ours */
	ino_t ino;
	struct ctl_session *sessions;
	int32_t rover;
	int rmem_default, rmem_max; /* net.core.*, read at open */
	unsigned int n_overrun;	    /* sessions owed an ENOBUFS */
	unsigned int n_backlog;	    /* sessions with a dump waiting */
};

/* the answer queue (defined with the session API at the end) */
static int raw_send(struct ctl_session *s, const void *buf, size_t len);
static void overrun(struct ctl_session *s);
static bool backlog_feed(struct ctl_session *s);
static int do_pull(struct ctl_session *s);

static int mkdir_parents(const char *path)
{
	char *dir = strdup(path);
	char *p;
	int ret = 0;

	if (!dir)
		return -ENOMEM;
	p = strrchr(dir, '/');
	if (!p || p == dir)
		goto out;
	*p = '\0';
	for (p = dir + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;

		*p = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			ret = -errno;
			goto out;
		}
		*p = c;
		if (c == '\0')
			break;
	}
out:
	free(dir);
	return ret;
}

/*
 * The socket's directory must be a real directory (lstat: not a symlink),
 * owned by root or by us, and writable by nobody else unless sticky (/tmp):
 * otherwise someone else could swap the socket file under us.
 */
static int check_dir(const char *path)
{
	char *dir = strdup(path);
	char *p;
	struct stat st;
	int ret = 0;

	if (!dir)
		return -ENOMEM;
	p = strrchr(dir, '/');
	if (!p)
		strcpy(dir, ".");
	else if (p == dir)
		p[1] = '\0';
	else
		*p = '\0';
	if (lstat(dir, &st) < 0)
		ret = -errno;
	else if (!S_ISDIR(st.st_mode))
		ret = -ENOTDIR;
	else if (st.st_uid != 0 && st.st_uid != geteuid())
		ret = -EPERM;
	else if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
		ret = -EPERM;
	free(dir);
	return ret;
}

/* Whether a daemon already answers on path. A stale socket file is removed. */
static int claim_path(const struct sockaddr_un *sun)
{
	struct stat st;
	int fd, ret;

	if (lstat(sun->sun_path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST; /* not ours to remove */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	ret = connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
	close(fd);
	if (ret == 0)
		return -EADDRINUSE;
	if (unlink(sun->sun_path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

static int read_sysctl(const char *path, int dflt)
{
	FILE *f = fopen(path, "re");
	int v = dflt;

	if (f) {
		if (fscanf(f, "%d", &v) != 1 || v <= 0)
			v = dflt;
		fclose(f);
	}
	return v;
}

int ctl_server_open(struct nftdp_ctl *ctl, const char *path, const struct ctl_server_ops *ops,
		    struct ctl_server **out)
{
	struct epoll_event ev = {.events = EPOLLIN};
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct ctl_server *srv;
	struct stat st;
	int ret;

	if (!path || !*path)
		path = NFTDP_CTL_DEFAULT_SOCKET;
	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	memcpy(sun.sun_path, path, strlen(path) + 1);

	srv = calloc(1, sizeof(*srv));
	if (!srv)
		return -ENOMEM;
	srv->ctl = ctl;
	srv->ops = *ops;
	srv->listen_fd = -1;
	srv->epoll_fd = -1;
	srv->rover = CTL_ROVER_START;
	/* a netlink socket's queue starts at rmem_default (212992 on most
	 * kernels) and SO_RCVBUF raises it up to rmem_max, doubled */
	srv->rmem_default = read_sysctl("/proc/sys/net/core/rmem_default", 212992);
	srv->rmem_max = read_sysctl("/proc/sys/net/core/rmem_max", 212992);
	srv->path = strdup(path);
	if (!srv->path) {
		ret = -ENOMEM;
		goto err_path;
	}
	ret = mkdir_parents(path);
	if (ret < 0)
		goto err_dir;
	ret = check_dir(path);
	if (ret < 0)
		goto err_dir;
	ret = claim_path(&sun);
	if (ret < 0)
		goto err_dir;

	srv->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (srv->listen_fd < 0) {
		ret = -errno;
		goto err_dir;
	}
	/* The socket file takes the socket inode's mode minus the umask at
	 * bind, which never follows a symlink at the path (EADDRINUSE): 0666
	 * under a zero umask, with nothing done by path afterwards. Anyone
	 * may open a netlink socket; each message is then checked for
	 * CAP_NET_ADMIN (ctl_session_privileged), as nfnetlink_rcv does. */
	if (fchmod(srv->listen_fd, CTL_SOCKET_MODE) < 0) {
		ret = -errno;
		goto err_bind;
	}
	{
		mode_t old = umask(0);
		int rc = bind(srv->listen_fd, (const struct sockaddr *)&sun, sizeof(sun));
		int err = errno;

		umask(old);
		if (rc < 0) {
			ret = -err;
			goto err_bind;
		}
	}
	if (lstat(path, &st) < 0) {
		ret = -errno;
		goto err_listen;
	}
	srv->dev = st.st_dev;
	srv->ino = st.st_ino;
	if (listen(srv->listen_fd, 128) < 0) {
		ret = -errno;
		goto err_listen;
	}
	srv->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (srv->epoll_fd < 0) {
		ret = -errno;
		goto err_listen;
	}
	ev.data.ptr = NULL; /* NULL: the listening socket */
	if (epoll_ctl(srv->epoll_fd, EPOLL_CTL_ADD, srv->listen_fd, &ev) < 0) {
		ret = -errno;
		goto err_epoll;
	}
	*out = srv;
	return 0;

err_epoll:
	close(srv->epoll_fd);
err_listen:
	unlink(path);
err_bind:
	close(srv->listen_fd);
err_dir:
	free(srv->path);
err_path:
	free(srv);
	return ret;
}

int ctl_server_fd(const struct ctl_server *srv)
{
	return srv->epoll_fd;
}

bool ctl_server_pending(const struct ctl_server *srv)
{
	return srv->n_overrun || srv->n_backlog;
}

/* ---- sessions ---- */

static bool portid_in_use(const struct ctl_server *srv, uint32_t portid)
{
	for (const struct ctl_session *s = srv->sessions; s; s = s->next)
		if (s->hello_done && s->portid == portid)
			return true;
	return false;
}

/* Mirrors netlink_autobind: the pid first, then negative ids from -4097 down. */
static uint32_t assign_portid(struct ctl_server *srv, pid_t pid)
{
	uint32_t portid = (uint32_t)pid;

	while (portid == 0 || portid_in_use(srv, portid)) {
		if (srv->rover >= -4096)
			srv->rover = CTL_ROVER_START;
		portid = (uint32_t)srv->rover--;
	}
	return portid;
}

static void read_comm(struct ctl_session *s)
{
	char path[64];
	ssize_t n;
	int fd;

	s->comm[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)s->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, s->comm, sizeof(s->comm) - 1);
	close(fd);
	if (n < 0)
		n = 0;
	s->comm[n] = '\0';
	s->comm[strcspn(s->comm, "\n")] = '\0';
}

/*
 * CAP_NET_ADMIN of the peer, as netlink_net_capable() checks it: the
 * effective set of the process that connected (its pid from SO_PEERCRED),
 * read from /proc at accept, in the daemon's own user namespace (a process
 * of another user namespace holds no capability over ours). The pid could
 * be reused between connect and the read: with SO_PEERPIDFD (Linux 6.5) the
 * peer is checked to be alive after the read, so the pid read was its own;
 * a peer that already exited is unprivileged.
 */
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif
#define CTL_CAP_NET_ADMIN 12

static bool same_userns(pid_t pid)
{
	struct stat a, b;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	if (stat(path, &a) < 0 || stat("/proc/self/ns/user", &b) < 0)
		return false;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static bool peer_cap_net_admin(int fd, pid_t pid)
{
	unsigned long long capeff = 0;
	bool found = false;
	char path[64], line[256];
	socklen_t len;
	int pidfd = -1;
	FILE *f;

	if (pid <= 0)
		return false;
	len = sizeof(pidfd);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) < 0)
		pidfd = -1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "CapEff: %llx", &capeff) == 1) {
				found = true;
				break;
			}
		fclose(f);
	}
	if (found && !same_userns(pid))
		found = false;
	if (pidfd >= 0) {
		/* still the same process: the pid was not reused meanwhile (only
		 * ESRCH says it is gone; valgrind, for one, answers ENOSYS) */
		if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0 && errno == ESRCH)
			found = false;
		close(pidfd);
	}
	return found && (capeff >> CTL_CAP_NET_ADMIN & 1);
}

static void session_free(struct ctl_session *s)
{
	struct ctl_server *srv = s->srv;

	srv->ops.closed(srv->ctl, s);
	if (s->overrun)
		srv->n_overrun--;
	if (s->bl)
		srv->n_backlog--;
	free(s->bl);
	epoll_ctl(srv->epoll_fd, EPOLL_CTL_DEL, s->fd, NULL);
	*s->pprev = s->next;
	if (s->next)
		s->next->pprev = s->pprev;
	close(s->fd);
	if (s->dgram_fd >= 0)
		close(s->dgram_fd);
	if (s->pending_fd >= 0)
		close(s->pending_fd);
	free(s->rbuf);
	free(s);
}

static void accept_one(struct ctl_server *srv, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN};
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct ctl_session *s;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || len != sizeof(cred))
		goto err;
	s = calloc(1, sizeof(*s));
	if (!s)
		goto err;
	s->rbuf = malloc(CTL_RBUF_MIN);
	if (!s->rbuf)
		goto err_buf;
	s->rbuf_size = CTL_RBUF_MIN;
	s->srv = srv;
	s->fd = fd;
	s->dgram_fd = -1;
	s->pending_fd = -1;
	s->pid = cred.pid;
	s->uid = cred.uid;
	s->rcvbuf = srv->rmem_default;
	s->privileged = peer_cap_net_admin(fd, cred.pid);
	read_comm(s);
	ev.data.ptr = s;
	if (epoll_ctl(srv->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0)
		goto err_epoll;
	s->next = srv->sessions;
	if (s->next)
		s->next->pprev = &s->next;
	s->pprev = &srv->sessions;
	srv->sessions = s;
	return;

err_epoll:
	free(s->rbuf);
err_buf:
	free(s);
err:
	close(fd);
}

static int accept_all(struct ctl_server *srv)
{
	for (int i = 0; i < CTL_EVENTS; i++) {
		int fd = accept4(srv->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			switch (errno) {
			case EAGAIN:
			case EINTR:
			case ECONNABORTED:
			case EPROTO:
			case EPERM:
				return 0;
			case EMFILE:
			case ENFILE:
			case ENOBUFS:
			case ENOMEM:
				/* Transient: try again on the next poll. */
				return 0;
			default:
				return -errno;
			}
		}
		accept_one(srv, fd);
	}
	return 0;
}

static void set_events(struct ctl_session *s, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = s};

	epoll_ctl(s->srv->epoll_fd, EPOLL_CTL_MOD, s->fd, &ev);
}

/* 0, or -1 when the session must be closed. */
static int flush_out(struct ctl_session *s)
{
	while (s->out_off < s->out_used) {
		ssize_t n = send(s->fd, s->out + s->out_off, s->out_used - s->out_off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				return -1;
			if (!s->out_wait) {
				s->out_wait = true;
				set_events(s, EPOLLOUT);
			}
			return 0;
		}
		s->out_off += (size_t)n;
	}
	s->out_off = s->out_used = 0;
	if (s->out_wait) {
		s->out_wait = false;
		set_events(s, EPOLLIN);
	}
	return 0;
}

static int send_done(struct ctl_session *s, const void *payload, uint32_t len)
{
	struct ctl_wire_hdr hdr = {.type = CTL_WIRE_DONE, .len = len};

	memcpy(s->out, &hdr, sizeof(hdr));
	memcpy(s->out + sizeof(hdr), payload, len);
	s->out_off = 0;
	s->out_used = sizeof(hdr) + len;
	return flush_out(s);
}

static int send_status(struct ctl_session *s, int32_t status)
{
	return send_done(s, &status, sizeof(status));
}

static bool is_unix_dgram(int fd)
{
	int type = 0, domain = 0;
	socklen_t len = sizeof(type);

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_DGRAM)
		return false;
	len = sizeof(domain);
	return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 && domain == AF_UNIX;
}

static int do_hello(struct ctl_session *s, const void *payload)
{
	struct ctl_wire_hello hello;
	struct ctl_wire_hello_done done = {0};
	int size = CTL_ANSWER_SNDBUF;

	memcpy(&hello, payload, sizeof(hello));
	if (s->hello_done)
		return -1; /* one HELLO per stream */
	if (hello.version != NFTDP_CTL_WIRE_VERSION)
		done.status = -EPROTO;
	else if (hello.protocol != NETLINK_NETFILTER)
		done.status = -EPROTONOSUPPORT;
	else if (s->pending_fd < 0 || !is_unix_dgram(s->pending_fd))
		done.status = -EBADF;
	if (done.status)
		return send_done(s, &done, sizeof(done));

	s->dgram_fd = s->pending_fd;
	s->pending_fd = -1;
	if (setsockopt(s->dgram_fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(s->dgram_fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	s->portid = assign_portid(s->srv, s->pid);
	s->hello_done = true;
	done.portid = s->portid;
	return send_done(s, &done, sizeof(done));
}

/* Mirrors netlink_setsockopt for the options nft and libmnl use. */
static int do_sockopt(struct ctl_session *s, const void *payload)
{
	struct ctl_wire_sockopt opt;
	int32_t status = 0;

	memcpy(&opt, payload, sizeof(opt));
	if (opt.level == SOL_SOCKET && (opt.name == SO_RCVBUF || opt.name == SO_RCVBUFFORCE)) {
		/* sock_setsockopt: FORCE needs CAP_NET_ADMIN, the plain one is
		 * capped by rmem_max; both are doubled */
		long long v = opt.value < 0 ? 0 : opt.value;

		if (opt.name == SO_RCVBUFFORCE && !s->privileged) {
			status = -EPERM;
			goto out;
		}
		if (opt.name == SO_RCVBUF && v > s->srv->rmem_max)
			v = s->srv->rmem_max;
		v *= 2;
		s->rcvbuf = v > INT_MAX ? INT_MAX : v < 2304 ? 2304 : (int)v;
		goto out;
	}
	if (opt.level != SOL_NETLINK) {
		status = -ENOPROTOOPT;
		goto out;
	}
	switch (opt.name) {
	case NETLINK_ADD_MEMBERSHIP:
	case NETLINK_DROP_MEMBERSHIP:
		/* nfnetlink sets no NL_CFG_F_NONROOT_RECV: listening needs
		 * CAP_NET_ADMIN (netlink_allowed). */
		if (!s->privileged) {
			status = -EPERM;
			break;
		}
		if (opt.value < 1 || opt.value > 32) {
			status = -EINVAL;
			break;
		}
		if (opt.name == NETLINK_ADD_MEMBERSHIP)
			s->groups |= 1u << (opt.value - 1);
		else
			s->groups &= ~(1u << (opt.value - 1));
		break;
	case NETLINK_EXT_ACK:
		s->ext_ack = opt.value != 0;
		break;
	case NETLINK_CAP_ACK:
		s->cap_ack = opt.value != 0;
		break;
	case NETLINK_NO_ENOBUFS:
		s->no_enobufs = opt.value != 0;
		break;
	case NETLINK_BROADCAST_ERROR:
		s->bcast_err = opt.value != 0;
		break;
	default:
		/* PKTINFO, LISTEN_ALL_NSID, GET_STRICT_CHK, ...:
		 * accepted, nothing nft relies on. */
		break;
	}
out:
	return send_status(s, status);
}

static int do_bind(struct ctl_session *s, const void *payload)
{
	uint32_t groups;

	memcpy(&groups, payload, sizeof(groups));
	if (groups && !s->privileged)
		return send_status(s, -EPERM);
	s->groups = groups; /* netlink_update_subscriptions: replaces groups[0] */
	return send_status(s, 0);
}

/* netlink_dump_start while the socket's dump still runs: -EBUSY, acked. */
static bool dump_busy(struct ctl_session *s, const void *payload, uint32_t len)
{
	const struct nlmsghdr *nlh = payload;
	struct nlmsghdr *e;
	struct nlmsgerr *err;
	size_t copy;

	if (!s->bl || !s->privileged || len < sizeof(*nlh) || nlh->nlmsg_len < sizeof(*nlh) ||
	    nlh->nlmsg_len > len || (nlh->nlmsg_flags & NLM_F_DUMP) != NLM_F_DUMP ||
	    !(nlh->nlmsg_flags & NLM_F_REQUEST))
		return false;
	/* netlink_ack: the request echoed unless NETLINK_CAP_ACK */
	copy = s->cap_ack ? sizeof(*nlh) : nlh->nlmsg_len;
	e = calloc(1, NLMSG_HDRLEN + sizeof(*err) - sizeof(err->msg) + NLMSG_ALIGN(copy));
	if (!e)
		return false;
	e->nlmsg_len = NLMSG_HDRLEN + sizeof(*err) - sizeof(err->msg) + copy;
	e->nlmsg_type = NLMSG_ERROR;
	e->nlmsg_flags = s->cap_ack ? NLM_F_CAPPED : 0;
	e->nlmsg_seq = nlh->nlmsg_seq;
	e->nlmsg_pid = s->portid;
	err = NLMSG_DATA(e);
	err->error = -EBUSY;
	memcpy(&err->msg, nlh, copy);
	ctl_session_send(s, e, e->nlmsg_len);
	free(e);
	return true;
}

static int do_nlmsg(struct ctl_session *s, const void *payload, uint32_t len)
{
	int status;

	if (!s->hello_done)
		return -1;
	if (dump_busy(s, payload, len))
		return send_status(s, 0);
	status = s->srv->ops.rcv(s->srv->ctl, s, payload, len);
	if (status > 0)
		status = 0;
	return send_status(s, status);
}

/* Whether a frame header is acceptable; a bad one closes the session. */
static bool frame_ok(const struct ctl_wire_hdr *hdr)
{
	switch (hdr->type) {
	case CTL_WIRE_HELLO:
		return hdr->len == sizeof(struct ctl_wire_hello);
	case CTL_WIRE_NLMSG:
		return hdr->len <= CTL_FRAME_MAX;
	case CTL_WIRE_SOCKOPT:
		return hdr->len == sizeof(struct ctl_wire_sockopt);
	case CTL_WIRE_BIND:
		return hdr->len == sizeof(uint32_t);
	case CTL_WIRE_PULL:
		return hdr->len == 0;
	default:
		return false;
	}
}

/* Handle every complete frame in rbuf. 0, or -1 to close the session. */
static int process_frames(struct ctl_session *s)
{
	size_t off = 0;
	int ret = 0;

	while (!s->out_used && s->rbuf_used - off >= sizeof(struct ctl_wire_hdr)) {
		struct ctl_wire_hdr hdr;
		const uint8_t *payload;

		memcpy(&hdr, s->rbuf + off, sizeof(hdr));
		if (!frame_ok(&hdr)) {
			ret = -1;
			break;
		}
		if (s->rbuf_used - off - sizeof(hdr) < hdr.len)
			break;
		payload = s->rbuf + off + sizeof(hdr);
		off += sizeof(hdr) + hdr.len;
		/* An fd travels with HELLO only. */
		if (hdr.type != CTL_WIRE_HELLO && s->pending_fd >= 0) {
			ret = -1;
			break;
		}
		switch (hdr.type) {
		case CTL_WIRE_HELLO:
			ret = do_hello(s, payload);
			break;
		case CTL_WIRE_NLMSG:
			ret = do_nlmsg(s, payload, hdr.len);
			break;
		case CTL_WIRE_SOCKOPT:
			ret = do_sockopt(s, payload);
			break;
		case CTL_WIRE_BIND:
			ret = do_bind(s, payload);
			break;
		case CTL_WIRE_PULL:
			ret = do_pull(s);
			break;
		}
		if (ret < 0)
			break;
	}
	if (off) {
		memmove(s->rbuf, s->rbuf + off, s->rbuf_used - off);
		s->rbuf_used -= off;
	}
	if (ret == 0 && s->rbuf_size > CTL_RBUF_KEEP && s->rbuf_used <= CTL_RBUF_MIN) {
		uint8_t *small = realloc(s->rbuf, CTL_RBUF_MIN);

		if (small) {
			s->rbuf = small;
			s->rbuf_size = CTL_RBUF_MIN;
		}
	}
	return ret;
}

/* Make room for the rest of the frame in progress, growing geometrically so
 * that a peer announcing a huge frame costs only what it really sends. */
static int grow_rbuf(struct ctl_session *s)
{
	struct ctl_wire_hdr hdr;
	size_t need, size;
	uint8_t *p;

	if (s->rbuf_used < s->rbuf_size)
		return 0;
	if (s->rbuf_used < sizeof(hdr))
		return 0; /* cannot happen: rbuf_size >= CTL_RBUF_MIN */
	memcpy(&hdr, s->rbuf, sizeof(hdr));
	need = sizeof(hdr) + (size_t)hdr.len;
	if (need <= s->rbuf_size)
		return 0;
	size = s->rbuf_size * 2;
	if (size > need)
		size = need;
	p = realloc(s->rbuf, size);
	if (!p)
		return -1;
	s->rbuf = p;
	s->rbuf_size = size;
	return 0;
}

static void stash_fds(struct ctl_session *s, struct msghdr *msg)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		size_t n;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (s->pending_fd < 0)
				s->pending_fd = fd;
			else
				close(fd);
		}
	}
}

/* 0, or -1 to close the session. */
static int session_read(struct ctl_session *s)
{
	for (int i = 0; i < CTL_READS_PER_EVENT && !s->out_used; i++) {
		union {
			char buf[CMSG_SPACE(4 * sizeof(int))];
			struct cmsghdr align;
		} cbuf;
		struct iovec iov;
		struct msghdr msg = {
		    .msg_iov = &iov,
		    .msg_iovlen = 1,
		    .msg_control = cbuf.buf,
		    .msg_controllen = sizeof(cbuf.buf),
		};
		ssize_t n;

		if (grow_rbuf(s) < 0)
			return -1;
		iov.iov_base = s->rbuf + s->rbuf_used;
		iov.iov_len = s->rbuf_size - s->rbuf_used;
		if (!iov.iov_len)
			return 0;
		n = recvmsg(s->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -1;
		}
		if (msg.msg_controllen)
			stash_fds(s, &msg);
		if (n == 0)
			return -1; /* EOF: the shim closed its socket */
		s->rbuf_used += (size_t)n;
		if (process_frames(s) < 0)
			return -1;
	}
	return 0;
}

static void deliver_overruns(struct ctl_server *srv);

int ctl_server_poll(struct ctl_server *srv, int timeout_ms)
{
	struct epoll_event evs[CTL_EVENTS];
	int n, ret;

	deliver_overruns(srv);
	n = epoll_wait(srv->epoll_fd, evs, CTL_EVENTS,
		       (srv->n_overrun || srv->n_backlog) && timeout_ms > 1 ? 1 : timeout_ms);
	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		struct ctl_session *s = evs[i].data.ptr;

		if (!s) {
			if (evs[i].events & (EPOLLERR | EPOLLHUP))
				return -EIO;
			ret = accept_all(srv);
			if (ret < 0)
				return ret;
			continue;
		}
		/* A session is only ever freed by its own event, so s is alive. */
		if (evs[i].events & EPOLLOUT) {
			if (flush_out(s) < 0) {
				session_free(s);
				continue;
			}
			if (!s->out_used && process_frames(s) < 0) {
				session_free(s);
				continue;
			}
		}
		if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
			if (s->out_wait && !(evs[i].events & (EPOLLHUP | EPOLLERR)))
				continue;
			if (session_read(s) < 0)
				session_free(s);
		}
	}
	return 0;
}

void ctl_server_close(struct ctl_server *srv)
{
	struct stat st;

	if (!srv)
		return;
	while (srv->sessions)
		session_free(srv->sessions);
	close(srv->epoll_fd);
	close(srv->listen_fd);
	/* Remove the socket file only if it is still the one we bound. */
	if (lstat(srv->path, &st) == 0 && st.st_dev == srv->dev && st.st_ino == srv->ino)
		unlink(srv->path);
	free(srv->path);
	free(srv);
}

/* Bytes the peer has not read yet (skb truesize, as sk_rmem_alloc counts). */
static int queued(const struct ctl_session *s)
{
	int q = 0;

	if (s->dgram_fd < 0 || ioctl(s->dgram_fd, SIOCOUTQ, &q) < 0)
		return 0;
	return q;
}

/*
 * netlink_broadcast to one listener: past its receive buffer the
 * notification is dropped and the listener is owed ENOBUFS (netlink_overrun,
 * unless NETLINK_NO_ENOBUFS); until it got it, everything is dropped (the
 * kernel's NETLINK_S_CONGESTED). Unicast answers are not limited here.
 */
static bool mcast_one(struct ctl_server *srv, struct ctl_session *s, const void *buf, size_t len)
{
	(void)srv;
	/* a send the socket pair refuses (its send buffer, however large
	 * it was made) is a full queue all the same, never a silent loss */
	if (s->overrun || s->bl || queued(s) >= s->rcvbuf || raw_send(s, buf, len) == -ENOBUFS) {
		overrun(s);
		/* do_one_broadcast: a BROADCAST_ERROR listener's failure is
		 * the sender's (delivery_failure) */
		return !s->bcast_err;
	}
	return true;
}

/* Feed waiting dumps; queue the ENOBUFS marker once the listener has read
 * half its queue. */
static void deliver_overruns(struct ctl_server *srv)
{
	if (srv->n_backlog)
		for (struct ctl_session *s = srv->sessions; s; s = s->next)
			if (s->bl)
				backlog_feed(s);
	if (!srv->n_overrun)
		return;
	for (struct ctl_session *s = srv->sessions; s; s = s->next) {
		if (!s->overrun || queued(s) > s->rcvbuf / 2)
			continue;
		if (send(s->dgram_fd, CTL_WIRE_OVERRUN, CTL_WIRE_OVERRUN_LEN,
			 MSG_DONTWAIT | MSG_NOSIGNAL) == CTL_WIRE_OVERRUN_LEN) {
			s->overrun = false;
			srv->n_overrun--;
		}
	}
}

bool ctl_server_multicast(struct ctl_server *srv, unsigned int group, const void *buf, size_t len,
			  const struct ctl_session *skip)
{
	bool ok = true;

	for (struct ctl_session *s = srv->sessions; s; s = s->next)
		if (s != skip && ctl_session_in_group(s, group))
			ok &= mcast_one(srv, s, buf, len);
	return ok;
}

/* do_one_broadcast's test (sk_rmem_alloc >= sk_rcvbuf, or congested) for
 * the listeners whose failure netlink_broadcast reports */
bool ctl_server_group_blocked(const struct ctl_server *srv, unsigned int group)
{
	for (const struct ctl_session *s = srv->sessions; s; s = s->next)
		if (s->bcast_err && ctl_session_in_group(s, group) &&
		    (s->overrun || s->bl || queued(s) >= s->rcvbuf))
			return true;
	return false;
}

bool ctl_server_has_listeners(const struct ctl_server *srv, unsigned int group)
{
	for (const struct ctl_session *s = srv->sessions; s; s = s->next)
		if (ctl_session_in_group(s, group))
			return true;
	return false;
}

/* ---- the session API nfnl.c uses ---- */

uint32_t ctl_session_portid(const struct ctl_session *s)
{
	return s->portid;
}

pid_t ctl_session_pid(const struct ctl_session *s)
{
	return s->pid;
}

const char *ctl_session_comm(const struct ctl_session *s)
{
	return s->comm;
}

bool ctl_session_privileged(const struct ctl_session *s)
{
	return s->privileged;
}

bool ctl_session_ext_ack(const struct ctl_session *s)
{
	return s->ext_ack;
}

bool ctl_session_cap_ack(const struct ctl_session *s)
{
	return s->cap_ack;
}

bool ctl_session_in_group(const struct ctl_session *s, unsigned int group)
{
	if (group < 1 || group > 32 || !s->hello_done)
		return false;
	return s->groups & (1u << (group - 1));
}

static int raw_send(struct ctl_session *s, const void *buf, size_t len)
{
	ssize_t n;

	do
		n = send(s->dgram_fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return (errno == EAGAIN || errno == EWOULDBLOCK) ? -ENOBUFS : -errno;
	return 0;
}

/* netlink_overrun: the peer is owed ENOBUFS (unless NETLINK_NO_ENOBUFS). */
static void overrun(struct ctl_session *s)
{
	if (!s->no_enobufs && !s->overrun) {
		s->overrun = true;
		s->srv->n_overrun++;
	}
}

static int backlog_add(struct ctl_session *s, const void *buf, size_t len)
{
	size_t need = sizeof(uint32_t) + len;
	uint32_t l = (uint32_t)len;

	if (s->bl_len + need > s->bl_cap) {
		size_t cap = s->bl_cap ? s->bl_cap : 64 * 1024;
		uint8_t *nb;

		if (s->bl_off) { /* what was fed is gone: move the rest down */
			memmove(s->bl, s->bl + s->bl_off, s->bl_len - s->bl_off);
			s->bl_len -= s->bl_off;
			s->bl_off = 0;
		}
		while (cap < s->bl_len + need)
			cap *= 2;
		if (cap != s->bl_cap) {
			nb = realloc(s->bl, cap);
			if (!nb)
				return -ENOMEM;
			if (!s->bl)
				s->srv->n_backlog++;
			s->bl = nb;
			s->bl_cap = cap;
		}
	}
	memcpy(s->bl + s->bl_len, &l, sizeof(l));
	memcpy(s->bl + s->bl_len + sizeof(l), buf, len);
	s->bl_len += need;
	return 0;
}

/* Move waiting dump parts into the peer's queue while it has room; true
 * when nothing waits any more. */
static bool backlog_feed(struct ctl_session *s)
{
	while (s->bl && s->bl_off < s->bl_len && queued(s) < s->rcvbuf) {
		uint32_t l;

		memcpy(&l, s->bl + s->bl_off, sizeof(l));
		if (raw_send(s, s->bl + s->bl_off + sizeof(l), l) < 0)
			break;
		s->bl_off += sizeof(l) + l;
	}
	if (s->bl && s->bl_off == s->bl_len) {
		free(s->bl);
		s->bl = NULL;
		s->bl_off = s->bl_len = s->bl_cap = 0;
		s->srv->n_backlog--;
	}
	return !s->bl;
}

static int do_pull(struct ctl_session *s)
{
	if (!s->hello_done)
		return -1;
	backlog_feed(s);
	if (s->overrun && queued(s) <= s->rcvbuf / 2 &&
	    send(s->dgram_fd, CTL_WIRE_OVERRUN, CTL_WIRE_OVERRUN_LEN,
		 MSG_DONTWAIT | MSG_NOSIGNAL) == CTL_WIRE_OVERRUN_LEN) {
		s->overrun = false;
		s->srv->n_overrun--;
	}
	/* 1: the peer has something to read now */
	return send_status(s, queued(s) > 0 ? 1 : 0);
}

/*
 * A unicast answer, as netlink_unicast to a socket whose queue is bounded by
 * sk_rcvbuf: a dump part (NLM_F_MULTI) waits in the daemon until the peer has
 * room (the kernel produces the next part only then); anything else to a
 * full queue is dropped and the peer owed ENOBUFS, as the kernel drops it.
 */
int ctl_session_send(struct ctl_session *s, const void *buf, size_t len)
{
	const struct nlmsghdr *nlh = buf;
	bool dump = len >= sizeof(*nlh) && (nlh->nlmsg_flags & NLM_F_MULTI);
	bool fed;

	if (s->dgram_fd < 0)
		return -ENOTCONN;
	fed = backlog_feed(s);
	if (dump) {
		if (!fed || queued(s) >= s->rcvbuf)
			return backlog_add(s, buf, len);
		return raw_send(s, buf, len);
	}
	if (!fed || queued(s) > s->rcvbuf) {
		overrun(s);
		return -ENOBUFS;
	}
	return raw_send(s, buf, len);
}
