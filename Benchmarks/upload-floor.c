/*
 * The floor of an SMP image upload's client CPU over UDP (issue 23, item 4): what any client must
 * spend when it does nothing but the system calls of the protocol — one thread, a blocking
 * connected socket, one send and one receive per chunk, the frames written by hand, no hashing,
 * no logging, no progress. Not a client (no retries beyond a resend from the last offset, no
 * validation of more than the answer's `rc` and `off`): an instrument, for
 * Benchmarks/cpu-per-mib.py --floor to set beside ours and smpclient.
 *
 * Usage: upload-floor PORT IMAGE [DATA_PER_CHUNK [WINDOW]]   (127.0.0.1; default 1440 bytes, 3)
 * A device out of buffers (rc 2, ENOMEM) gets the window one smaller and the chunks again from the
 * last confirmed offset.
 * Prints the client's CPU seconds (user + system, getrusage) for the upload loop alone.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static uint8_t *put_be16(uint8_t *p, uint32_t v) { p[0] = v >> 8; p[1] = v; return p + 2; }
static uint8_t *put_be32(uint8_t *p, uint32_t v) { p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v; return p + 4; }
static uint8_t *put_key(uint8_t *p, const char *key) {
    size_t n = strlen(key);
    *p++ = 0x60 | (uint8_t)n; /* a text string shorter than 24 bytes */
    memcpy(p, key, n);
    return p + n;
}

/* An image upload request (group 1, command 1, write) for the chunk at `off`. */
static size_t frame(uint8_t *out, uint8_t seq, const uint8_t *image, uint32_t size, uint32_t off, uint32_t n) {
    uint8_t *p = out + 8;
    *p++ = off == 0 ? 0xa4 : 0xa2; /* the first chunk also names the image and its length */
    if (off == 0) {
        p = put_key(p, "image"); *p++ = 0x00;
        p = put_key(p, "len"); *p++ = 0x1a; p = put_be32(p, size);
    }
    p = put_key(p, "off"); *p++ = 0x1a; p = put_be32(p, off);
    p = put_key(p, "data"); *p++ = 0x59; p = put_be16(p, n);
    memcpy(p, image + off, n);
    p += n;
    size_t body = (size_t)(p - out) - 8;
    out[0] = 2; out[1] = 0; /* write, version 0 */
    put_be16(out + 2, (uint32_t)body);
    put_be16(out + 4, 1); /* image management */
    out[6] = seq; out[7] = 1; /* upload */
    return (size_t)(p - out);
}

/* The unsigned integer after the text key `key` in an answer; -1 when there is none. */
static long long answer_uint(const uint8_t *a, ssize_t len, const char *key) {
    size_t k = strlen(key);
    for (ssize_t i = 8; i + 1 + (ssize_t)k < len; i++) {
        if (a[i] != (0x60 | k) || memcmp(a + i + 1, key, k) != 0) continue;
        const uint8_t *v = a + i + 1 + k;
        ssize_t left = len - (i + 1 + (ssize_t)k);
        if (v[0] < 24) return v[0];
        if (v[0] == 0x18 && left >= 2) return v[1];
        if (v[0] == 0x19 && left >= 3) return (v[1] << 8) | v[2];
        if (v[0] == 0x1a && left >= 5) return ((long long)v[1] << 24) | (v[2] << 16) | (v[3] << 8) | v[4];
        return -1;
    }
    return -1;
}

static double cpu_seconds(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s PORT IMAGE [DATA_PER_CHUNK [WINDOW]]\n", argv[0]);
        return 64;
    }
    uint32_t chunk = argc > 3 ? (uint32_t)atoi(argv[3]) : 1440, window = argc > 4 ? (uint32_t)atoi(argv[4]) : 3;
    FILE *file = fopen(argv[2], "rb");
    if (!file || chunk == 0 || chunk > 60000 || window == 0) { perror(argv[2]); return 66; }
    fseek(file, 0, SEEK_END);
    long length = ftell(file);
    rewind(file);
    uint8_t *image = malloc((size_t)length);
    if (length <= 0 || !image || fread(image, 1, (size_t)length, file) != (size_t)length) { perror("read"); return 66; }
    fclose(file);
    uint32_t size = (uint32_t)length;

    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1]))};
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    if (fd < 0 || connect(fd, (struct sockaddr *)&to, sizeof to) != 0) { perror("connect"); return 1; }

    static uint8_t out[65536], in[65536];
    double before = cpu_seconds();
    uint32_t acked = 0, next = 0;
    uint8_t seq = 0;
    int silent = 0;
    while (acked < size) {
        /* Keep `window` chunks in flight; the first goes alone (the device opens the upload). */
        while (next < size && next < acked + window * chunk && (next == 0 || acked > 0)) {
            uint32_t n = size - next < chunk ? size - next : chunk;
            size_t len = frame(out, seq++, image, size, next, n);
            if (send(fd, out, len, 0) != (ssize_t)len) { perror("send"); return 2; }
            next += n;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 1000) <= 0) {
            if (++silent == 5) { fprintf(stderr, "no answer at offset %u\n", acked); return 2; }
            next = acked; /* send again from what the device confirmed */
            continue;
        }
        ssize_t got = recv(fd, in, sizeof in, 0);
        if (got < 8) continue;
        long long rc = answer_uint(in, got, "rc"), off = answer_uint(in, got, "off");
        if (rc == 2) {
            window = window > 1 ? window - 1 : 1;
            next = acked;
            continue;
        }
        if (rc > 0) { fprintf(stderr, "the device refused: rc %lld at offset %u\n", rc, acked); return 1; }
        if (off < 0) continue;
        silent = 0;
        if ((uint32_t)off > acked) acked = (uint32_t)off;
        if ((uint32_t)off < acked || next < acked) next = acked; /* the device asks from there */
    }
    printf("%.6f\n", cpu_seconds() - before);
    return 0;
}
