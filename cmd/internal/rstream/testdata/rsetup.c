/*
 * rsetup: connection setup and teardown over rdma-core's rsockets in one
 * process, the C side of BenchmarkRsocketSetup (setup_bench_test.go). A
 * thread accepts and closes; the main thread connects and closes; count
 * times. It prints the count, the loop's seconds, the process's context
 * switches and its CPU seconds over the loop. The benchmark builds it with
 * gcc against librdmacm.so.1; the rsocket calls are declared here, since
 * rdma/rsocket.h comes with librdmacm-dev, which the oracles do not need.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

int rsocket(int domain, int type, int protocol);
int rbind(int socket, const struct sockaddr *addr, socklen_t addrlen);
int rlisten(int socket, int backlog);
int raccept(int socket, struct sockaddr *addr, socklen_t *addrlen);
int rconnect(int socket, const struct sockaddr *addr, socklen_t addrlen);
int rclose(int socket);

static int listener, count;

static void *acceptor(void *arg)
{
	(void)arg;
	for (int i = 0; i < count; i++) {
		int s = raccept(listener, NULL, NULL);
		if (s < 0) {
			perror("raccept");
			exit(1);
		}
		rclose(s);
	}
	return NULL;
}

static double seconds(struct timeval tv)
{
	return tv.tv_sec + tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct rusage r0, r1;
	struct timespec t0, t1;
	pthread_t th;

	if (argc != 4) {
		fprintf(stderr, "usage: rsetup address port count\n");
		return 2;
	}
	if (inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1) {
		fprintf(stderr, "rsetup: bad address %s\n", argv[1]);
		return 2;
	}
	sa.sin_port = htons(atoi(argv[2]));
	count = atoi(argv[3]);

	listener = rsocket(AF_INET, SOCK_STREAM, 0);
	if (listener < 0 || rbind(listener, (struct sockaddr *)&sa, sizeof(sa)) ||
	    rlisten(listener, 16)) {
		perror("rsetup: listen");
		return 1;
	}
	getrusage(RUSAGE_SELF, &r0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (pthread_create(&th, NULL, acceptor, NULL)) {
		perror("pthread_create");
		return 1;
	}
	for (int i = 0; i < count; i++) {
		int s = rsocket(AF_INET, SOCK_STREAM, 0);
		if (s < 0 || rconnect(s, (struct sockaddr *)&sa, sizeof(sa))) {
			perror("rconnect");
			return 1;
		}
		rclose(s);
	}
	pthread_join(th, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	getrusage(RUSAGE_SELF, &r1);
	printf("%d %.6f %ld %.6f\n", count,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	       (r1.ru_nvcsw + r1.ru_nivcsw) - (r0.ru_nvcsw + r0.ru_nivcsw),
	       seconds(r1.ru_utime) + seconds(r1.ru_stime) -
		       seconds(r0.ru_utime) - seconds(r0.ru_stime));
	rclose(listener);
	return 0;
}
