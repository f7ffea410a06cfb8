/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libnftdp_shim.so: LD_PRELOAD into the stock nft so that its
 * socket(AF_NETLINK, *, NETLINK_NETFILTER) reaches nftdp instead of the
 * kernel. The fd nft gets is one end of an AF_UNIX SOCK_DGRAM socketpair; the
 * daemon holds the other end and queues every netlink answer on it. Requests
 * travel as ctl_wire.h frames on a private SOCK_STREAM connection, and the
 * shim's sendmsg returns only after the daemon's DONE, i.e. after every answer
 * is queued (docs/shim.md). The rest mimics net/netlink/af_netlink.c where nft
 * or libmnl can tell: bind, getsockname, {get,set}sockopt, and the
 * sockaddr_nl that recvmsg reports. There is no fallback to the kernel.
 */
#undef _FORTIFY_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <linux/netfilter/ipset/ip_set.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <netinet/in.h>

#include "ctl_wire.h"

#define SHIM_EXPORT __attribute__((visibility("default")))
#define SHIM_MAX_FDS 65536
/* The kernel's SOCK_MIN_SNDBUF/RCVBUF are about this on 64-bit. */
#define SHIM_SOCK_MIN_BUF 4608

struct shim_sock {
	pthread_mutex_t lock; /* one request at a time on the stream */
	int stream;
	int type;  /* SOCK_RAW or SOCK_DGRAM, as socket() was asked */
	bool dead; /* the daemon went away */
	uint32_t portid;
	uint32_t groups;
	uint32_t nlopts; /* bit n: SOL_NETLINK boolean option n is on */
	int rcvbuf;
	int sndbuf;
};

/* fd -> emulated socket. Slots are published and cleared atomically, so the
 * hot calls (read, write, close on unrelated fds) take no lock. */
static struct shim_sock *shim_tab[SHIM_MAX_FDS];

#define REAL(name) real_##name
#define DECLARE_REAL(ret, name, ...) static ret (*real_##name)(__VA_ARGS__)

DECLARE_REAL(int, socket, int, int, int);
DECLARE_REAL(int, bind, int, __CONST_SOCKADDR_ARG, socklen_t);
DECLARE_REAL(int, getsockname, int, __SOCKADDR_ARG, socklen_t *);
DECLARE_REAL(int, setsockopt, int, int, int, const void *, socklen_t);
DECLARE_REAL(int, getsockopt, int, int, int, void *, socklen_t *);
DECLARE_REAL(ssize_t, sendto, int, const void *, size_t, int, __CONST_SOCKADDR_ARG, socklen_t);
DECLARE_REAL(ssize_t, send, int, const void *, size_t, int);
DECLARE_REAL(ssize_t, sendmsg, int, const struct msghdr *, int);
DECLARE_REAL(ssize_t, write, int, const void *, size_t);
DECLARE_REAL(ssize_t, recvmsg, int, struct msghdr *, int);
DECLARE_REAL(ssize_t, recvfrom, int, void *, size_t, int, __SOCKADDR_ARG, socklen_t *);
DECLARE_REAL(ssize_t, recv, int, void *, size_t, int);
DECLARE_REAL(ssize_t, read, int, void *, size_t);
DECLARE_REAL(int, close, int);
DECLARE_REAL(int, connect, int, __CONST_SOCKADDR_ARG, socklen_t);

static pthread_once_t shim_once = PTHREAD_ONCE_INIT;

static void resolve(void **slot, const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);

	if (!p)
		abort(); /* no libc below us: nothing sane to do */
	*slot = p;
}

#define RESOLVE(name) resolve((void **)&real_##name, #name)

static void shim_resolve_all(void)
{
	RESOLVE(socket);
	RESOLVE(bind);
	RESOLVE(getsockname);
	RESOLVE(setsockopt);
	RESOLVE(getsockopt);
	RESOLVE(sendto);
	RESOLVE(send);
	RESOLVE(sendmsg);
	RESOLVE(write);
	RESOLVE(recvmsg);
	RESOLVE(recvfrom);
	RESOLVE(recv);
	RESOLVE(read);
	RESOLVE(close);
	RESOLVE(connect);
}

/* Every hook starts here: hooks can run before our constructor (from other
 * libraries' constructors), so resolution is on first use. */
#define INIT() pthread_once(&shim_once, shim_resolve_all)

__attribute__((constructor)) static void shim_init(void)
{
	INIT();
}

static struct shim_sock *lookup(int fd)
{
	if (fd < 0 || fd >= SHIM_MAX_FDS)
		return NULL;
	return __atomic_load_n(&shim_tab[fd], __ATOMIC_ACQUIRE);
}

/* ---- the stream to the daemon ---- */

/* Write all of iov (modified). 0 or -errno. */
static int write_all(int fd, struct iovec *iov, int iovcnt, const void *ctrl, size_t ctrllen)
{
	while (iovcnt > 0) {
		struct msghdr msg = {
		    .msg_iov = iov,
		    .msg_iovlen = iovcnt > IOV_MAX ? IOV_MAX : iovcnt,
		    .msg_control = (void *)ctrl,
		    .msg_controllen = ctrllen,
		};
		ssize_t n = REAL(sendmsg)(fd, &msg, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		ctrl = NULL; /* the fd went with the first bytes */
		ctrllen = 0;
		while (iovcnt > 0 && (size_t)n >= iov->iov_len) {
			n -= (ssize_t)iov->iov_len;
			iov++;
			iovcnt--;
		}
		if (iovcnt > 0) {
			iov->iov_base = (char *)iov->iov_base + n;
			iov->iov_len -= (size_t)n;
		}
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = REAL(read)(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ECONNRESET;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Read one DONE frame whose payload is exactly len bytes. 0 or -errno. */
static int read_done(int fd, void *payload, uint32_t len)
{
	struct ctl_wire_hdr hdr;
	int ret = read_all(fd, &hdr, sizeof(hdr));

	if (ret < 0)
		return ret;
	if (hdr.type != CTL_WIRE_DONE || hdr.len != len)
		return -EPROTO;
	return read_all(fd, payload, len);
}

/* Send one frame (payload gathered from iov) and wait for its int32 DONE.
 * Returns the daemon's status (0 or -errno), or -ECONNREFUSED when the
 * daemon is gone. */
static int request(struct shim_sock *ss, uint32_t type, const struct iovec *iov, int iovcnt)
{
	struct iovec *v;
	struct ctl_wire_hdr hdr = {.type = type};
	int32_t status;
	size_t total = 0;
	int ret;

	for (int i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	if (total > UINT32_MAX)
		return -EMSGSIZE;
	hdr.len = (uint32_t)total;
	v = malloc(sizeof(*v) * ((size_t)iovcnt + 1));
	if (!v)
		return -ENOBUFS;
	v[0].iov_base = &hdr;
	v[0].iov_len = sizeof(hdr);
	if (iovcnt)
		memcpy(v + 1, iov, sizeof(*v) * (size_t)iovcnt);

	pthread_mutex_lock(&ss->lock);
	if (ss->dead) {
		ret = -ECONNREFUSED;
		goto out;
	}
	ret = write_all(ss->stream, v, iovcnt + 1, NULL, 0);
	if (ret == 0)
		ret = read_done(ss->stream, &status, sizeof(status));
	if (ret < 0) {
		/* A broken stream cannot be resynchronised. */
		ss->dead = true;
		ret = -ECONNREFUSED;
	} else {
		ret = status;
	}
out:
	pthread_mutex_unlock(&ss->lock);
	free(v);
	return ret;
}

static int request_buf(struct shim_sock *ss, uint32_t type, const void *buf, size_t len)
{
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};

	return request(ss, type, &iov, 1);
}

/* ---- socket() ---- */

static int daemon_connect(void)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	const char *path = getenv("NFTDP_SOCKET");
	int fd, err;

	if (!path || !*path)
		path = NFTDP_CTL_DEFAULT_SOCKET;
	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	strcpy(sun.sun_path, path);
	fd = REAL(socket)(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	while (REAL(connect)(fd, (const struct sockaddr *)&sun, sizeof(sun)) < 0) {
		if (errno == EINTR)
			continue;
		err = errno;
		REAL(close)(fd);
		return -err;
	}
	return fd;
}

static int hello(int stream, int answer_fd, uint32_t *portid)
{
	struct ctl_wire_hello msg = {
	    .version = NFTDP_CTL_WIRE_VERSION,
	    .protocol = NETLINK_NETFILTER,
	};
	struct ctl_wire_hdr hdr = {.type = CTL_WIRE_HELLO, .len = sizeof(msg)};
	struct iovec iov[2] = {
	    {.iov_base = &hdr, .iov_len = sizeof(hdr)},
	    {.iov_base = &msg, .iov_len = sizeof(msg)},
	};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct cmsghdr *c = &cbuf.align;
	struct ctl_wire_hello_done done;
	int ret;

	memset(&cbuf, 0, sizeof(cbuf));
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &answer_fd, sizeof(int));
	ret = write_all(stream, iov, 2, cbuf.buf, sizeof(cbuf.buf));
	if (ret < 0)
		return ret == -EPIPE ? -ECONNREFUSED : ret;
	ret = read_done(stream, &done, sizeof(done));
	if (ret < 0)
		return ret == -ECONNRESET ? -ECONNREFUSED : ret;
	if (done.status < 0)
		return done.status;
	*portid = done.portid;
	return 0;
}

static int default_buf(int fd, int name)
{
	int val = 212992; /* net.core.[rw]mem_default on most systems */
	socklen_t len = sizeof(val);

	REAL(getsockopt)(fd, SOL_SOCKET, name, &val, &len);
	return val;
}

static int nl_socket(int type)
{
	int base = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	int sv[2] = {-1, -1}, stream = -1, err;
	struct shim_sock *ss;
	uint32_t portid = 0;

	if (base != SOCK_RAW && base != SOCK_DGRAM) {
		errno = ESOCKTNOSUPPORT;
		return -1;
	}
	ss = calloc(1, sizeof(*ss));
	if (!ss) {
		errno = ENOBUFS;
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0) {
		err = errno;
		goto err_pair;
	}
	if (sv[0] >= SHIM_MAX_FDS) {
		err = EMFILE;
		goto err_stream;
	}
	stream = daemon_connect();
	if (stream < 0) {
		err = -stream;
		goto err_stream;
	}
	err = -hello(stream, sv[1], &portid);
	if (err)
		goto err_hello;
	REAL(close)(sv[1]);
	if (!(type & SOCK_CLOEXEC)) {
		int fl = fcntl(sv[0], F_GETFD);

		fcntl(sv[0], F_SETFD, fl & ~FD_CLOEXEC);
	}
	if (type & SOCK_NONBLOCK) {
		int fl = fcntl(sv[0], F_GETFL);

		fcntl(sv[0], F_SETFL, fl | O_NONBLOCK);
	}
	pthread_mutex_init(&ss->lock, NULL);
	ss->stream = stream;
	ss->type = base;
	ss->portid = portid;
	ss->rcvbuf = default_buf(sv[0], SO_RCVBUF);
	ss->sndbuf = default_buf(sv[0], SO_SNDBUF);
	__atomic_store_n(&shim_tab[sv[0]], ss, __ATOMIC_RELEASE);
	return sv[0];

err_hello:
	REAL(close)(stream);
err_stream:
	REAL(close)(sv[0]);
	REAL(close)(sv[1]);
err_pair:
	free(ss);
	errno = err;
	return -1;
}

SHIM_EXPORT int socket(int domain, int type, int protocol)
{
	INIT();
	if (domain == AF_NETLINK && protocol == NETLINK_NETFILTER)
		return nl_socket(type);
	return REAL(socket)(domain, type, protocol);
}

SHIM_EXPORT int close(int fd)
{
	struct shim_sock *ss = NULL;

	INIT();
	if (fd >= 0 && fd < SHIM_MAX_FDS && __atomic_load_n(&shim_tab[fd], __ATOMIC_RELAXED))
		ss = __atomic_exchange_n(&shim_tab[fd], NULL, __ATOMIC_ACQ_REL);
	if (ss) {
		REAL(close)(ss->stream);
		pthread_mutex_destroy(&ss->lock);
		free(ss);
	}
	return REAL(close)(fd);
}

/* ---- addresses ---- */

static void fill_nladdr(void *addr, socklen_t *addrlen, uint32_t portid, uint32_t groups)
{
	struct sockaddr_nl nl = {
	    .nl_family = AF_NETLINK,
	    .nl_pid = portid,
	    .nl_groups = groups,
	};
	socklen_t n;

	if (!addr || !addrlen)
		return;
	n = *addrlen < sizeof(nl) ? *addrlen : (socklen_t)sizeof(nl);
	memcpy(addr, &nl, n);
	*addrlen = sizeof(nl);
}

/* Mirrors netlink_bind: the socket is already bound (the daemon assigned the
 * port id at socket()), so only nl_pid 0 or the assigned id is accepted. */
SHIM_EXPORT int bind(int fd, __CONST_SOCKADDR_ARG addr, socklen_t len)
{
	struct shim_sock *ss = lookup(fd);
	const struct sockaddr_nl *nl = (const struct sockaddr_nl *)addr.__sockaddr__;
	uint32_t groups;
	int ret;

	INIT();
	if (!ss)
		return REAL(bind)(fd, addr, len);
	if (len < sizeof(*nl) || !nl || nl->nl_family != AF_NETLINK) {
		errno = EINVAL;
		return -1;
	}
	if (nl->nl_pid && nl->nl_pid != ss->portid) {
		errno = EINVAL;
		return -1;
	}
	groups = nl->nl_groups;
	ret = request_buf(ss, CTL_WIRE_BIND, &groups, sizeof(groups));
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	ss->groups = groups;
	return 0;
}

SHIM_EXPORT int getsockname(int fd, __SOCKADDR_ARG addr, socklen_t *len)
{
	struct shim_sock *ss = lookup(fd);

	INIT();
	if (!ss)
		return REAL(getsockname)(fd, addr, len);
	if (!addr.__sockaddr__ || !len) {
		errno = EFAULT;
		return -1;
	}
	fill_nladdr(addr.__sockaddr__, len, ss->portid, ss->groups);
	return 0;
}

/* ---- socket options ---- */

static int clamp_buf(int val, const char *sysctl, bool force)
{
	long long v = val < 0 ? 0 : val;

	if (!force) {
		FILE *f = fopen(sysctl, "re");
		long long max;

		if (f) {
			if (fscanf(f, "%lld", &max) == 1 && v > max)
				v = max;
			fclose(f);
		}
	}
	/* sock_setsockopt: the kernel doubles the value for bookkeeping
	 * overhead, and getsockopt reports the doubled value. */
	v *= 2;
	if (v > INT_MAX)
		v = INT_MAX;
	if (v < SHIM_SOCK_MIN_BUF)
		v = SHIM_SOCK_MIN_BUF;
	return (int)v;
}

SHIM_EXPORT int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	struct shim_sock *ss = lookup(fd);
	struct ctl_wire_sockopt opt;
	int v, ret;

	INIT();
	if (!ss)
		return REAL(setsockopt)(fd, level, name, val, len);
	if (level == SOL_SOCKET) {
		switch (name) {
		case SO_RCVBUF:
		case SO_RCVBUFFORCE:
		case SO_SNDBUF:
		case SO_SNDBUFFORCE:
			if (len < sizeof(int) || !val) {
				errno = EINVAL;
				return -1;
			}
			memcpy(&v, val, sizeof(v));
			if (name == SO_RCVBUF || name == SO_RCVBUFFORCE) {
				/* the daemon bounds what it queues for us by
				 * it (and refuses FORCE without CAP_NET_ADMIN) */
				opt.level = SOL_SOCKET;
				opt.name = name;
				opt.value = v;
				ret = request_buf(ss, CTL_WIRE_SOCKOPT, &opt, sizeof(opt));
				if (ret < 0) {
					errno = -ret;
					return -1;
				}
				ss->rcvbuf = clamp_buf(v, "/proc/sys/net/core/rmem_max",
						       name == SO_RCVBUFFORCE);
			} else
				ss->sndbuf = clamp_buf(v, "/proc/sys/net/core/wmem_max",
						       name == SO_SNDBUFFORCE);
			return 0;
		default:
			return REAL(setsockopt)(fd, level, name, val, len);
		}
	}
	if (level != SOL_NETLINK) {
		errno = ENOPROTOOPT;
		return -1;
	}
	if (len < sizeof(int) || !val) {
		errno = EINVAL;
		return -1;
	}
	memcpy(&v, val, sizeof(v));
	opt.level = level;
	opt.name = name;
	opt.value = v;
	ret = request_buf(ss, CTL_WIRE_SOCKOPT, &opt, sizeof(opt));
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	if (name == NETLINK_ADD_MEMBERSHIP && v >= 1 && v <= 32)
		ss->groups |= 1u << (v - 1);
	else if (name == NETLINK_DROP_MEMBERSHIP && v >= 1 && v <= 32)
		ss->groups &= ~(1u << (v - 1));
	else if (name > 0 && name < 32) {
		if (v)
			ss->nlopts |= 1u << name;
		else
			ss->nlopts &= ~(1u << name);
	}
	return 0;
}

static int put_int(void *val, socklen_t *len, int v)
{
	if (!val || !len || *len < sizeof(int)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(val, &v, sizeof(v));
	*len = sizeof(int);
	return 0;
}

/* One ipset command (GET_BYNAME or GET_BYINDEX) to the daemon over an
 * emulated netlink socket of our own; the answer's attributes into *id,
 * *family, name (IPSET_MAXNAMELEN). 0, or -errno of the answer. */
static int ipset_query(uint8_t cmd, const char *set, uint16_t index, uint16_t *id, uint8_t *family,
		       char *name)
{
	union {
		char buf[512];
		struct nlmsghdr align;
	} u;
	struct nlmsghdr *nlh = &u.align;
	struct nfgenmsg *nfg;
	struct nlattr *a;
	ssize_t n;
	int fd, ret = -EPROTO;
	size_t off;

	memset(&u, 0, sizeof(u));
	nlh->nlmsg_type = (NFNL_SUBSYS_IPSET << 8) | cmd;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = 1;
	nlh->nlmsg_len = NLMSG_LENGTH(sizeof(*nfg));
	nfg = NLMSG_DATA(nlh);
	nfg->nfgen_family = AF_INET;
	a = (struct nlattr *)((char *)nlh + NLMSG_ALIGN(nlh->nlmsg_len));
	a->nla_type = IPSET_ATTR_PROTOCOL;
	a->nla_len = NLA_HDRLEN + 1;
	*((uint8_t *)a + NLA_HDRLEN) = IPSET_PROTOCOL;
	nlh->nlmsg_len = NLMSG_ALIGN(nlh->nlmsg_len) + NLA_ALIGN(a->nla_len);
	a = (struct nlattr *)((char *)nlh + nlh->nlmsg_len);
	if (set) {
		a->nla_type = IPSET_ATTR_SETNAME;
		a->nla_len = (uint16_t)(NLA_HDRLEN + strnlen(set, IPSET_MAXNAMELEN - 1) + 1);
		memcpy((char *)a + NLA_HDRLEN, set, a->nla_len - NLA_HDRLEN - 1);
	} else {
		uint16_t be = htons(index);

		a->nla_type = IPSET_ATTR_INDEX | NLA_F_NET_BYTEORDER;
		a->nla_len = NLA_HDRLEN + 2;
		memcpy((char *)a + NLA_HDRLEN, &be, 2);
	}
	nlh->nlmsg_len += NLA_ALIGN(a->nla_len);

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	if (fd < 0)
		return -errno;
	if (send(fd, nlh, nlh->nlmsg_len, 0) < 0) {
		ret = -errno;
		goto out;
	}
	n = recv(fd, &u, sizeof(u), MSG_DONTWAIT);
	if (n < (ssize_t)NLMSG_HDRLEN || nlh->nlmsg_len > (size_t)n)
		goto out;
	if (nlh->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(nlh);

		if (nlh->nlmsg_len >= NLMSG_LENGTH(sizeof(int)))
			ret = e->error ? e->error : -EPROTO;
		goto out;
	}
	ret = 0;
	for (off = NLMSG_LENGTH(sizeof(*nfg)); off + NLA_HDRLEN <= nlh->nlmsg_len;) {
		a = (struct nlattr *)((char *)nlh + off);
		if (a->nla_len < NLA_HDRLEN || off + a->nla_len > nlh->nlmsg_len)
			break;
		switch (a->nla_type & NLA_TYPE_MASK) {
		case IPSET_ATTR_INDEX:
			if (a->nla_len >= NLA_HDRLEN + 2) {
				uint16_t be;

				memcpy(&be, (char *)a + NLA_HDRLEN, 2);
				*id = ntohs(be);
			}
			break;
		case IPSET_ATTR_FAMILY:
			if (a->nla_len >= NLA_HDRLEN + 1)
				*family = *((uint8_t *)a + NLA_HDRLEN);
			break;
		case IPSET_ATTR_SETNAME:
			if (name) {
				size_t l = a->nla_len - NLA_HDRLEN;

				if (l > IPSET_MAXNAMELEN - 1)
					l = IPSET_MAXNAMELEN - 1;
				memcpy(name, (char *)a + NLA_HDRLEN, l);
				name[l] = '\0';
			}
			break;
		}
		off += NLA_ALIGN(a->nla_len);
	}
out:
	close(fd);
	return ret;
}

/* getsockopt(SOL_IP, SO_IP_SET): what iptables' set match and SET target
 * ask the kernel (ip_set_sockfn_get): the protocol version, a set's index
 * (and family) by name, a set's name by index. Answered from nftdp's sets
 * (ipset through the shim, docs/iptables.md) with the kernel's errnos. */
static int ip_set_sockopt(void *val, socklen_t *len)
{
	unsigned int op;
	uint16_t id = IPSET_INVALID_ID;
	uint8_t family = 0;

	if (!len || *len < sizeof(unsigned int) || !val) {
		errno = EINVAL;
		return -1;
	}
	memcpy(&op, val, sizeof(op));
	if (op < IP_SET_OP_VERSION) {
		struct ip_set_req_version v;

		if (*len < sizeof(v)) {
			errno = EINVAL;
			return -1;
		}
		memcpy(&v, val, sizeof(v));
		if (v.version < IPSET_PROTOCOL_MIN) {
			errno = EPROTO;
			return -1;
		}
	}
	switch (op) {
	case IP_SET_OP_VERSION: {
		struct ip_set_req_version *v = val;

		if (*len != sizeof(*v)) {
			errno = EINVAL;
			return -1;
		}
		v->version = IPSET_PROTOCOL;
		return 0;
	}
	case IP_SET_OP_GET_BYNAME:
	case IP_SET_OP_GET_FNAME: {
		bool fname = op == IP_SET_OP_GET_FNAME;
		struct ip_set_req_get_set *g = val;
		struct ip_set_req_get_set_family *f = val;
		char *name = fname ? f->set.name : g->set.name;
		char copy[IPSET_MAXNAMELEN];
		int ret;

		if (*len != (fname ? sizeof(*f) : sizeof(*g))) {
			errno = EINVAL;
			return -1;
		}
		name[IPSET_MAXNAMELEN - 1] = '\0';
		memcpy(copy, name, sizeof(copy));
		ret = ipset_query(IPSET_CMD_GET_BYNAME, copy, 0, &id, &family, NULL);
		if (ret < 0 && ret != -ENOENT) {
			errno = -ret;
			return -1;
		}
		if (ret < 0)
			id = IPSET_INVALID_ID;
		if (fname) {
			f->set.index = id;
			if (id != IPSET_INVALID_ID)
				f->family = family;
		} else {
			g->set.index = id;
		}
		return 0;
	}
	case IP_SET_OP_GET_BYINDEX: {
		struct ip_set_req_get_set *g = val;
		char name[IPSET_MAXNAMELEN] = "";
		int ret;

		if (*len != sizeof(*g)) {
			errno = EINVAL;
			return -1;
		}
		ret = ipset_query(IPSET_CMD_GET_BYINDEX, NULL, g->set.index, &id, &family, name);
		if (ret < 0 && ret != -ENOENT) {
			errno = -ret;
			return -1;
		}
		memcpy(g->set.name, name, sizeof(name));
		return 0;
	}
	default:
		errno = EBADMSG;
		return -1;
	}
}

SHIM_EXPORT int getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	struct shim_sock *ss = lookup(fd);

	INIT();
	if (!ss && level == SOL_IP && name == SO_IP_SET)
		return ip_set_sockopt(val, len);
	if (!ss)
		return REAL(getsockopt)(fd, level, name, val, len);
	if (level == SOL_SOCKET) {
		switch (name) {
		case SO_RCVBUF:
			return put_int(val, len, ss->rcvbuf);
		case SO_SNDBUF:
			return put_int(val, len, ss->sndbuf);
		case SO_TYPE:
			return put_int(val, len, ss->type);
		case SO_DOMAIN:
			return put_int(val, len, AF_NETLINK);
		case SO_PROTOCOL:
			return put_int(val, len, NETLINK_NETFILTER);
		default:
			return REAL(getsockopt)(fd, level, name, val, len);
		}
	}
	if (level != SOL_NETLINK) {
		errno = ENOPROTOOPT;
		return -1;
	}
	switch (name) {
	case NETLINK_LIST_MEMBERSHIPS: {
		socklen_t want = sizeof(uint32_t);

		if (!len) {
			errno = EINVAL;
			return -1;
		}
		if (val && *len >= want)
			memcpy(val, &ss->groups, sizeof(uint32_t));
		*len = want;
		return 0;
	}
	case NETLINK_PKTINFO:
	case NETLINK_BROADCAST_ERROR:
	case NETLINK_NO_ENOBUFS:
	case NETLINK_LISTEN_ALL_NSID:
	case NETLINK_CAP_ACK:
	case NETLINK_EXT_ACK:
	case NETLINK_GET_STRICT_CHK:
		return put_int(val, len, !!(ss->nlopts & (1u << name)));
	default:
		errno = ENOPROTOOPT;
		return -1;
	}
}

/* ---- sending: one NLMSG frame, answers queued before DONE ---- */

static ssize_t nl_send(struct shim_sock *ss, const struct iovec *iov, size_t iovcnt,
		       const void *dest, socklen_t destlen)
{
	size_t total = 0;
	int ret;

	if (dest) {
		const struct sockaddr_nl *nl = dest;

		if (destlen < sizeof(*nl) || nl->nl_family != AF_NETLINK) {
			errno = EINVAL;
			return -1;
		}
		/* Only the kernel (port 0) lives behind this socket. */
		if (nl->nl_groups) {
			errno = EPERM;
			return -1;
		}
		if (nl->nl_pid) {
			errno = ECONNREFUSED;
			return -1;
		}
	}
	if (iovcnt > IOV_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	for (size_t i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len > SSIZE_MAX - total) {
			errno = EMSGSIZE;
			return -1;
		}
		total += iov[i].iov_len;
	}
	ret = request(ss, CTL_WIRE_NLMSG, iov, (int)iovcnt);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return (ssize_t)total;
}

SHIM_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	struct shim_sock *ss = lookup(fd);

	INIT();
	if (!ss)
		return REAL(sendmsg)(fd, msg, flags);
	if (!msg) {
		errno = EFAULT;
		return -1;
	}
	return nl_send(ss, msg->msg_iov, msg->msg_iovlen, msg->msg_name, msg->msg_namelen);
}

SHIM_EXPORT ssize_t sendto(int fd, const void *buf, size_t len, int flags,
			   __CONST_SOCKADDR_ARG addr, socklen_t addrlen)
{
	struct shim_sock *ss = lookup(fd);
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};

	INIT();
	if (!ss)
		return REAL(sendto)(fd, buf, len, flags, addr, addrlen);
	return nl_send(ss, &iov, 1, addr.__sockaddr__, addrlen);
}

SHIM_EXPORT ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	struct shim_sock *ss = lookup(fd);
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};

	INIT();
	if (!ss)
		return REAL(send)(fd, buf, len, flags);
	return nl_send(ss, &iov, 1, NULL, 0);
}

SHIM_EXPORT ssize_t write(int fd, const void *buf, size_t len)
{
	struct shim_sock *ss = lookup(fd);
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};

	INIT();
	if (!ss)
		return REAL(write)(fd, buf, len);
	return nl_send(ss, &iov, 1, NULL, 0);
}

/* ---- receiving: the real datagram, reported as coming from the kernel ---- */

/* The queue is empty: a kernel socket would run the next part of a dump in
 * this recvmsg (netlink_dump); ask the daemon for it. True when there is
 * something to read now; errno is left as EAGAIN otherwise. */
static bool pull(struct shim_sock *ss)
{
	int ret = request_buf(ss, CTL_WIRE_PULL, NULL, 0);

	errno = EAGAIN;
	return ret > 0;
}

/* The daemon dropped notifications for a full queue: this read is -1/ENOBUFS
 * (the kernel's sk_err after netlink_overrun), and the marker is gone. */
static ssize_t overrun(int fd, int flags)
{
	char m[CTL_WIRE_OVERRUN_LEN];

	if (flags & MSG_PEEK)
		REAL(recvfrom)(fd, m, sizeof(m), MSG_DONTWAIT, NULL, NULL);
	errno = ENOBUFS;
	return -1;
}

SHIM_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	struct shim_sock *ss = lookup(fd);
	void *name;
	socklen_t namelen;
	ssize_t n;

	INIT();
	if (!ss || !msg)
		return REAL(recvmsg)(fd, msg, flags);
	name = msg->msg_name;
	namelen = msg->msg_namelen;
	msg->msg_name = NULL;
	msg->msg_namelen = 0;
	n = REAL(recvmsg)(fd, msg, flags);
	while (n < 0 && errno == EAGAIN && pull(ss))
		n = REAL(recvmsg)(fd, msg, flags);
	msg->msg_name = name;
	msg->msg_namelen = namelen;
	if (n == CTL_WIRE_OVERRUN_LEN && msg->msg_iovlen && msg->msg_iov[0].iov_len >= (size_t)n &&
	    memcmp(msg->msg_iov[0].iov_base, CTL_WIRE_OVERRUN, (size_t)n) == 0)
		return overrun(fd, flags);
	if (n >= 0 && name)
		fill_nladdr(name, &msg->msg_namelen, 0, 0);
	return n;
}

SHIM_EXPORT ssize_t recvfrom(int fd, void *buf, size_t len, int flags, __SOCKADDR_ARG addr,
			     socklen_t *addrlen)
{
	struct shim_sock *ss = lookup(fd);
	ssize_t n;

	INIT();
	if (!ss)
		return REAL(recvfrom)(fd, buf, len, flags, addr, addrlen);
	n = REAL(recvfrom)(fd, buf, len, flags, NULL, NULL);
	while (n < 0 && errno == EAGAIN && pull(ss))
		n = REAL(recvfrom)(fd, buf, len, flags, NULL, NULL);
	if (n == CTL_WIRE_OVERRUN_LEN && len >= (size_t)n &&
	    memcmp(buf, CTL_WIRE_OVERRUN, (size_t)n) == 0)
		return overrun(fd, flags);
	if (n >= 0 && addr.__sockaddr__)
		fill_nladdr(addr.__sockaddr__, addrlen, 0, 0);
	return n;
}

/* recv: for the dump pull and the ENOBUFS marker (Python's socket.recv). */
SHIM_EXPORT ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	struct shim_sock *ss = lookup(fd);
	ssize_t n;

	INIT();
	if (!ss)
		return REAL(recv)(fd, buf, len, flags);
	n = REAL(recv)(fd, buf, len, flags);
	while (n < 0 && errno == EAGAIN && pull(ss))
		n = REAL(recv)(fd, buf, len, flags);
	if (n == CTL_WIRE_OVERRUN_LEN && len >= (size_t)n &&
	    memcmp(buf, CTL_WIRE_OVERRUN, (size_t)n) == 0)
		return overrun(fd, flags);
	return n;
}

SHIM_EXPORT ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags)
{
	if (len > buflen)
		abort();
	return recv(fd, buf, len, flags);
}

/* _FORTIFY_SOURCE builds of the caller reach these instead of recvfrom. */
SHIM_EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen, int flags,
				   __SOCKADDR_ARG addr, socklen_t *addrlen)
{
	if (len > buflen)
		abort();
	return recvfrom(fd, buf, len, flags, addr, addrlen);
}
