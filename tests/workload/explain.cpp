// SPDX-License-Identifier: GPL-2.0
/*
 * explain.cpp: llama-explain, a stand-in for llama-server's memory as memphase's causes see
 * it. Its classes and methods carry llama.cpp's real names (llama_mmap, llama_kv_cache,
 * llama_context::graph_reserve, server_prompt_cache::alloc, common_prompt_checkpoint, ...),
 * each touches a known number of bytes, and each request is served on a fresh worker
 * thread that stays alive (as the server's do), so every request creates a glibc malloc
 * arena. --report writes what it allocated for each cause (key=value).
 *
 * Pages are touched in this file's own functions (never memset in libc) except where the
 * real code path zero-fills through std::vector, which the stack then shows.
 *
 * It calls the libllama API where llama-server does (llama.h's declarations, defined here):
 * the model load, the context, per request the prompt's tokenization, the prompt cache's
 * state save, two prompt batches with a context checkpoint before the last, generated
 * tokens one decode each, and llama_free at the end, so the llama preset's phases and
 * requests are llama-server's.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

#include "llama.h"

#define MIB (1024UL * 1024UL)
#define NOINLINE __attribute__((noinline, noclone))

static volatile unsigned long sink;

/*
 * Writes one byte per page: every page of [p, p + n) faults once. A pause every MiB keeps
 * the pace at which memphase unwinds stack samples (a test run must lose none).
 */
static NOINLINE void touch(void *p, size_t n)
{
	volatile char *c = (volatile char *)p;

	for (size_t i = 0; i < n; i += 4096) {
		c[i] = 1;
		if (i % MIB == MIB - 4096)
			usleep(1000);
	}
}

extern "C" NOINLINE void *ggml_aligned_malloc(size_t size)
{
	void *p = NULL;

	if (posix_memalign(&p, 64, size))
		return NULL;
	return p;
}

/* the state's size, before the destination is allocated (a state phase begins here) */
extern "C" NOINLINE size_t llama_state_seq_get_size_ext(struct llama_context *ctx,
							 llama_seq_id seq_id,
							 llama_state_seq_flags flags)
{
	(void)ctx;
	(void)seq_id;
	sink += flags;		/* a call the compiler keeps */
	return flags;
}

/* the state copy of llama_state_seq_get_data_ext: fills dst */
extern "C" NOINLINE size_t llama_state_seq_get_data_ext(struct llama_context *ctx, uint8_t *dst,
							 size_t size, llama_seq_id seq_id,
							 llama_state_seq_flags flags)
{
	(void)ctx;
	(void)seq_id;
	(void)flags;
	touch(dst, size);
	return size;
}

struct llama_mmap {
	void *addr = MAP_FAILED;
	size_t size = 0;
	NOINLINE explicit llama_mmap(const char *path);
};

llama_mmap::llama_mmap(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st)) {
		perror(path);
		exit(2);
	}
	size = st.st_size;
	addr = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (addr == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
}

struct llama_model_loader {
	NOINLINE void load_all_data(const llama_mmap &m);
};

void llama_model_loader::load_all_data(const llama_mmap &m)
{
	const volatile char *c = (const volatile char *)m.addr;
	unsigned long s = 0;

	for (size_t i = 0; i < m.size; i += 4096) {
		s += c[i];
		if (i % MIB == MIB - 4096)
			usleep(1000);
	}
	sink = s;
}

struct llama_kv_cache {
	char *buf;
	size_t size;
	NOINLINE explicit llama_kv_cache(size_t size);
};

llama_kv_cache::llama_kv_cache(size_t n) : size(n)
{
	buf = (char *)ggml_aligned_malloc(n);
	if (!buf)
		exit(2);
	touch(buf, n);		/* the cache is cleared at creation */
}

struct llama_context {
	char *compute = nullptr;
	size_t compute_size = 0, touched = 0;
	NOINLINE void graph_reserve(size_t size, size_t first);
	NOINLINE void set_input_kq_mask(size_t n);
};

/* the compute buffer: reserved whole, faulted in as the context fills */
void llama_context::graph_reserve(size_t size, size_t first)
{
	compute = (char *)ggml_aligned_malloc(size);
	if (!compute)
		exit(2);
	compute_size = size;
	touch(compute, first);
	touched = first;
}

void llama_context::set_input_kq_mask(size_t n)
{
	if (touched + n > compute_size)
		n = compute_size - touched;
	touch(compute + touched, n);
	touched += n;
}

struct llama_vocab {
	struct impl {
		NOINLINE std::vector<int32_t> *tokenize(size_t bytes);
	};
};

std::vector<int32_t> *llama_vocab::impl::tokenize(size_t bytes)
{
	/* value-initialized: std::vector zero-fills it */
	auto *v = new std::vector<int32_t>(bytes / sizeof(int32_t));

	for (size_t i = 0; i < v->size(); i += 1024)
		(*v)[i] = (int32_t)i;
	return v;
}

struct server_prompt_cache {
	std::vector<uint8_t *> states;
	NOINLINE uint8_t *alloc(size_t n);
};

uint8_t *server_prompt_cache::alloc(size_t n)
{
	uint8_t *p = new uint8_t[n];

	states.push_back(p);
	return p;
}

struct common_prompt_checkpoint {
	std::vector<uint8_t> data;
	NOINLINE void update_tgt(size_t n);
};

void common_prompt_checkpoint::update_tgt(size_t n)
{
	/* the SWA part of the slot's state, as the server copies it */
	llama_state_seq_get_size_ext(NULL, 0, LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY);
	data.resize(n);		/* zero-filled by std::vector */
	llama_state_seq_get_data_ext(NULL, data.data(), n, 0, LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY);
}

struct server_slot {
	std::vector<void *> pieces;
	NOINLINE void process_tokens(size_t bytes);
};

/* small allocations that land in the thread's malloc arena */
void server_slot::process_tokens(size_t bytes)
{
	for (size_t done = 0; done < bytes; done += 64 * 1024) {
		void *p = malloc(64 * 1024 - 64);

		if (!p)
			exit(2);
		touch(p, 64 * 1024 - 64);
		pieces.push_back(p);
	}
}

struct opts {
	const char *model = NULL, *report = NULL;
	size_t kv = 24 * MIB, compute = 64 * MIB, compute_first = 8 * MIB;
	size_t kq_step = 4 * MIB, tok = 2 * MIB, cache = 16 * MIB, ckpt = 8 * MIB;
	size_t arena = 8 * MIB;
	unsigned int requests = 4;
	unsigned int pause_ms = 20;	/* between requests */
	unsigned int remap = 0;		/* map and unmap one 2 MiB buffer this many times */
};

static struct opts o;
static llama_context ctx;
static server_prompt_cache cache;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;
static bool done;
static pid_t tids[64];
static unsigned int served;		/* requests done */

/* ---- the libllama API, where llama-server calls it ---- */

#define BATCH_MAX 512
#define GEN_TOKENS 8

extern "C" NOINLINE struct llama_model *llama_model_load_from_file(const char *path,
								   struct llama_model_params params)
{
	llama_mmap *m = new llama_mmap(path);
	llama_model_loader ml;

	(void)params;
	ml.load_all_data(*m);
	return (struct llama_model *)m;
}

/* the KV cache and the compute buffer's reservation */
extern "C" NOINLINE struct llama_context *llama_init_from_model(struct llama_model *model,
								struct llama_context_params params)
{
	llama_kv_cache *kv = new llama_kv_cache(o.kv);

	(void)model;
	(void)params;
	sink += (unsigned long)kv;
	ctx.graph_reserve(o.compute, o.compute_first);
	return &ctx;
}

extern "C" NOINLINE void llama_free(struct llama_context *c)
{
	sink += (unsigned long)c;
}

extern "C" NOINLINE int32_t llama_tokenize(const struct llama_vocab *vocab, const char *text,
					   int32_t text_len, llama_token *tokens,
					   int32_t n_tokens_max, bool add_special, bool parse_special)
{
	llama_vocab::impl impl;

	(void)vocab;
	(void)text;
	(void)tokens;
	(void)add_special;
	(void)parse_special;
	sink += (unsigned long)impl.tokenize(o.tok);
	return text_len < n_tokens_max ? text_len : n_tokens_max;
}

/* a prompt batch fills the compute buffer in proportion to its tokens; a token, nothing */
extern "C" NOINLINE int32_t llama_decode(struct llama_context *c, struct llama_batch batch)
{
	if (batch.n_tokens > 1)
		c->set_input_kq_mask(o.kq_step / (2 * BATCH_MAX) * batch.n_tokens);
	return 0;
}

/* n tokens of slot 0 from position pos, logits on the last one (all, for one token) */
static int32_t decode(unsigned int pos, unsigned int n)
{
	static thread_local llama_token tok[BATCH_MAX];
	static thread_local llama_pos p[BATCH_MAX];
	static thread_local int32_t nseq[BATCH_MAX];
	static thread_local llama_seq_id seq0, *seq[BATCH_MAX];
	static thread_local int8_t logits[BATCH_MAX];
	llama_batch b = { (int32_t)n, tok, NULL, p, nseq, seq, logits };

	for (unsigned int k = 0; k < n; k++) {
		tok[k] = 1;
		p[k] = (llama_pos)(pos + k);
		nseq[k] = 1;
		seq[k] = &seq0;
		logits[k] = k == n - 1;
	}
	return llama_decode(&ctx, b);
}

struct server_context {
	NOINLINE void prompt_save(size_t n);
	NOINLINE void handle_request(unsigned int i);
};

void server_context::prompt_save(size_t n)
{
	llama_state_seq_get_size_ext(NULL, 0, 0);
	uint8_t *p = cache.alloc(n);

	llama_state_seq_get_data_ext(NULL, p, n, 0, 0);
}

void server_context::handle_request(unsigned int i)
{
	static common_prompt_checkpoint ckpts[64];
	static server_slot slots[64];

	llama_token prompt[2 * BATCH_MAX];
	unsigned int t;

	tids[i] = (pid_t)syscall(SYS_gettid);
	llama_tokenize(NULL, "prompt", 2 * BATCH_MAX, prompt, 2 * BATCH_MAX, true, true);
	/* as llama-server: the slot's last prompt goes to the cache when the next takes it */
	if (i)
		prompt_save(o.cache);
	/* the prompt's two batches, a context checkpoint before the last one */
	decode(0, BATCH_MAX);
	ckpts[i].update_tgt(o.ckpt);
	decode(BATCH_MAX, BATCH_MAX);
	/* the answer, a token a decode; the slot's host-side buffers grow meanwhile */
	for (t = 0; t < GEN_TOKENS; t++) {
		decode(2 * BATCH_MAX + t, 1);
		slots[i].process_tokens(o.arena / GEN_TOKENS);
	}
	__atomic_add_fetch(&served, 1, __ATOMIC_RELEASE);
}

static void *worker(void *arg)
{
	server_context sc;

	sc.handle_request((unsigned int)(uintptr_t)arg);
	/* the server's workers live on: the next request's thread needs a new arena */
	pthread_mutex_lock(&lock);
	while (!done)
		pthread_cond_wait(&done_cond, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* a scratch buffer mapped, touched and unmapped in a loop: the same range every time */
static NOINLINE void scratch_remap(unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		char *p = (char *)mmap(NULL, 2 * MIB, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			exit(2);
		p[0] = 1;
		munmap(p, 2 * MIB);
	}
}

static size_t mib_arg(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*end || end == s) {
		fprintf(stderr, "llama-explain: bad number '%s'\n", s);
		exit(2);
	}
	return v * MIB;
}

int main(int argc, char **argv)
{
	pthread_t th[64];
	unsigned int i;

	for (int a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--model") && a + 1 < argc)
			o.model = argv[++a];
		else if (!strcmp(argv[a], "--report") && a + 1 < argc)
			o.report = argv[++a];
		else if (!strcmp(argv[a], "--requests") && a + 1 < argc)
			o.requests = (unsigned int)(mib_arg(argv[++a]) / MIB);
		else if (!strcmp(argv[a], "--remap") && a + 1 < argc)
			o.remap = (unsigned int)(mib_arg(argv[++a]) / MIB);
		else if (!strcmp(argv[a], "--kv-mib") && a + 1 < argc)
			o.kv = mib_arg(argv[++a]);
		else if (!strcmp(argv[a], "--cache-mib") && a + 1 < argc)
			o.cache = mib_arg(argv[++a]);
		else if (!strcmp(argv[a], "--pause-ms") && a + 1 < argc)
			o.pause_ms = (unsigned int)(mib_arg(argv[++a]) / MIB);
		else {
			fprintf(stderr, "usage: llama-explain [--model FILE] [--requests N] "
					"[--kv-mib N] [--cache-mib N] [--remap N]\n"
					"                     [--pause-ms N] [--report FILE]\n");
			return 2;
		}
	}
	if (o.requests > 64 || o.requests * o.kq_step + o.compute_first > o.compute) {
		fprintf(stderr, "llama-explain: too many requests\n");
		return 2;
	}
	/* a fixed mmap threshold: big buffers are mmaps, small ones stay in the arenas */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	size_t weights = 0;
	struct llama_model_params mp = {};
	struct llama_context_params cp = {};
	if (o.model) {
		llama_mmap *m = (llama_mmap *)llama_model_load_from_file(o.model, mp);

		weights = m->size;
	}
	cp.n_ctx = 4096;
	cp.n_batch = cp.n_ubatch = BATCH_MAX;
	cp.n_seq_max = 1;
	llama_init_from_model(NULL, cp);
	for (i = 0; i < o.requests; i++) {
		if (pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i))
			return 1;
		/* one request at a time, as a single slot serves them */
		while (__atomic_load_n(&served, __ATOMIC_ACQUIRE) < i + 1)
			usleep(1000);
		usleep(o.pause_ms * 1000);
	}
	scratch_remap(o.remap);
	if (o.report) {
		FILE *f = fopen(o.report, "w");

		if (!f)
			return 1;
		fprintf(f, "pid=%d\n", getpid());
		fprintf(f, "requests=%u\n", o.requests);
		fprintf(f, "cause.model weights=%zu\n", weights);
		fprintf(f, "cause.KV cache=%zu\n", o.kv);
		fprintf(f, "cause.compute buffer=%zu\n", o.compute_first + o.requests * o.kq_step);
		fprintf(f, "cause.prompt cache=%zu\n", (o.requests - 1) * o.cache);
		fprintf(f, "cause.context checkpoints=%zu\n", o.requests * o.ckpt);
		fprintf(f, "cause.tokenizer buffers=%zu\n", o.requests * o.tok);
		fprintf(f, "cause.glibc malloc arenas=%zu\n", o.requests * o.arena);
		/* what each request allocates, by cause (handle_request; the first saves no
		 * prompt) */
		fprintf(f, "request.compute buffer=%zu\n", o.kq_step);
		fprintf(f, "request.prompt cache=%zu\n", o.cache);
		fprintf(f, "request.context checkpoints=%zu\n", o.ckpt);
		fprintf(f, "request.tokenizer buffers=%zu\n", o.tok);
		fprintf(f, "request.glibc malloc arenas=%zu\n", o.arena);
		for (i = 0; i < o.requests; i++)
			fprintf(f, "tid.%u=%d\n", i, tids[i]);
		fclose(f);
	}
	llama_free(&ctx);
	pthread_mutex_lock(&lock);
	done = true;
	pthread_cond_broadcast(&done_cond);
	pthread_mutex_unlock(&lock);
	for (i = 0; i < o.requests; i++)
		pthread_join(th[i], NULL);
	return 0;
}
