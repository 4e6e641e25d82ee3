/* mpi_graph.c: graph and distributed graph topologies and the
 * neighbourhood collectives, and MPI_Alltoallw. A ring as MPI_GRAPH (the
 * calls that read it; Neighbor_alltoall, where the two neighbours of a
 * 2-rank ring are one rank and the k-th block to it meets its k-th
 * receive); a directed ring by Dist_graph_create_adjacent with weights
 * (Neighbor_alltoallv); a star by Dist_graph_create with edges given by
 * either end (Neighbor_allgather); Cartesian neighbours, periodic (the
 * blocks sent down arrive as from above) and not (MPI_PROC_NULL edges
 * leave blocks alone); Alltoallw with other types per peer and in place;
 * the refusals with their messages. */
#include "mpi_test.h"

static int ring_out(int r, int k, int n) /* the ring graph's edges of r: r-1, r+1 */
{
	return ((k ? r + 1 : r - 1) % n + n) % n;
}

/* What MPI_Neighbor_alltoall with block k = 100 r + k of every rank r
 * puts in our block k: the m-th receive from P meets P's m-th send to us. */
static int expect_a2a(int k, const int *in, int nin, int (*out_of)(int p, int k, int n), int nout, int n)
{
	int p = in[k], m = 0;
	for (int j = 0; j < k; j++)
		m += in[j] == p;
	for (int t = 0; t < nout; t++)
		if (out_of(p, t, n) == t_rank && m-- == 0)
			return 100 * p + t;
	return -2;
}

static void graph_ring(int n)
{
	int *index = malloc(sizeof(int) * (size_t)n), *edges = malloc(sizeof(int) * 2 * (size_t)n);
	for (int i = 0; i < n; i++) {
		index[i] = 2 * (i + 1);
		edges[2 * i] = ring_out(i, 0, n);
		edges[2 * i + 1] = ring_out(i, 1, n);
	}
	MPI_Comm g, d;
	int mapped = -5, one = 0; /* MPI_Graph_map: this rank in the ring; past a 1-node graph, none */
	OK(MPI_Graph_map(MPI_COMM_WORLD, n, index, edges, &mapped));
	CHECK(mapped == t_rank, "Graph_map gave %d", mapped);
	OK(MPI_Graph_map(MPI_COMM_WORLD, 1, &one, edges, &mapped));
	CHECK(mapped == (t_rank ? MPI_UNDEFINED : 0), "Graph_map on a 1-node graph gave %d", mapped);
	t_fails_with(MPI_Graph_map(MPI_COMM_WORLD, n + 1, index, edges, &mapped), MPI_ERR_ARG, "nnodes",
		     "Graph_map with more nodes than ranks");
	OK(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &g));
	int topo, nn, ne, cnt, nb[2] = { -1, -1 }, gi[64], ge[128];
	OK(MPI_Topo_test(g, &topo));
	OK(MPI_Graphdims_get(g, &nn, &ne));
	OK(MPI_Graph_neighbors_count(g, t_rank, &cnt));
	OK(MPI_Graph_neighbors(g, t_rank, 2, nb));
	OK(MPI_Graph_get(g, 64, 128, gi, ge));
	CHECK(topo == MPI_GRAPH && nn == n && ne == 2 * n && cnt == 2 && nb[0] == edges[2 * t_rank] &&
	      nb[1] == edges[2 * t_rank + 1] && gi[n - 1] == 2 * n && ge[2 * n - 1] == edges[2 * n - 1],
	      "graph: topo %d, %d nodes %d edges, %d neighbours %d %d", topo, nn, ne, cnt, nb[0], nb[1]);
	int snd[2] = { 100 * t_rank, 100 * t_rank + 1 }, rcv[2] = { -1, -1 };
	OK(MPI_Neighbor_alltoall(snd, 1, MPI_INT, rcv, 1, MPI_INT, g));
	for (int k = 0; k < 2; k++) {
		int want = expect_a2a(k, nb, 2, ring_out, 2, n);
		CHECK(rcv[k] == want, "graph ring of %d: block %d = %d, want %d", n, k, rcv[k], want);
	}
	OK(MPI_Comm_dup(g, &d));
	OK(MPI_Topo_test(d, &topo));
	CHECK(topo == MPI_GRAPH, "a dup of a graph communicator: topology %d", topo);
	t_fails_with(MPI_Graph_neighbors_count(g, n, &cnt), MPI_ERR_RANK, "is not a node", "neighbours of node n");
	edges[0] = n;
	t_fails_with(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &d), MPI_ERR_ARG, "edges[0]",
		     "an edge to no node");
	MPI_Comm_free(&g);
	MPI_Comm_free(&d);
	free(index);
	free(edges);
}

static void dist_ring(int n)
{
	int src = (t_rank + n - 1) % n, dst = (t_rank + 1) % n, sw = 7, dw = 9;
	MPI_Comm g;
	OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, &sw, 1, &dst, &dw, MPI_INFO_NULL, 0, &g));
	int topo, in, out, weighted, s = -1, d = -1, sws = -1, dws = -1;
	OK(MPI_Topo_test(g, &topo));
	OK(MPI_Dist_graph_neighbors_count(g, &in, &out, &weighted));
	OK(MPI_Dist_graph_neighbors(g, 1, &s, &sws, 1, &d, &dws));
	CHECK(topo == MPI_DIST_GRAPH && in == 1 && out == 1 && weighted && s == src && d == dst && sws == 7 && dws == 9,
	      "dist ring: topo %d, in %d out %d weighted %d, %d(%d) -> %d(%d)", topo, in, out, weighted, s, sws, d,
	      dws);
	int v[3] = { t_rank, t_rank, t_rank }, got[4] = { -1, -1, -1, -1 }, c3 = 3, c3r = 3, z = 0, one = 1;
	OK(MPI_Neighbor_alltoallv(v, &c3, &z, MPI_INT, got, &c3r, &one, MPI_INT, g));
	CHECK(got[0] == -1 && got[1] == src && got[3] == src, "dist ring alltoallv: %d %d %d %d", got[0], got[1],
	      got[2], got[3]);
	int bad = n;
	MPI_Comm none;
	t_fails_with(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &bad, MPI_UNWEIGHTED, 0, NULL, MPI_UNWEIGHTED,
						    MPI_INFO_NULL, 0, &none),
		     MPI_ERR_RANK, "sources[0]", "a source outside the communicator");
	t_fails_with(MPI_Graphdims_get(g, &in, &out), MPI_ERR_TOPOLOGY, "has no graph topology",
		     "graph calls on a distributed graph");
	MPI_Comm_free(&g);
}

/* A star around rank 0; the edges 0 -> r are given by rank 0, the edges
 * r -> 0 by rank r. */
static void dist_star(int n)
{
	int nsrc = 1, srcs[1], deg[1], *dst = malloc(sizeof(int) * (size_t)n);
	srcs[0] = t_rank;
	if (t_rank == 0) {
		deg[0] = n - 1;
		for (int r = 1; r < n; r++)
			dst[r - 1] = r;
	} else {
		deg[0] = 1;
		dst[0] = 0;
	}
	MPI_Comm g;
	OK(MPI_Dist_graph_create(MPI_COMM_WORLD, nsrc, srcs, deg, dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
	int in, out, weighted;
	OK(MPI_Dist_graph_neighbors_count(g, &in, &out, &weighted));
	int want = t_rank ? 1 : n - 1;
	CHECK(in == want && out == want && !weighted, "star: in %d out %d weighted %d, want %d", in, out, weighted,
	      want);
	int *got = malloc(sizeof(int) * (size_t)n), me = 1000 + t_rank;
	for (int i = 0; i < n; i++)
		got[i] = -1;
	OK(MPI_Neighbor_allgather(&me, 1, MPI_INT, got, 1, MPI_INT, g));
	for (int k = 0; k < in; k++) {
		int w = t_rank ? 1000 : 1000 + k + 1;
		CHECK(got[k] == w, "star allgather: block %d = %d, want %d", k, got[k], w);
	}
	MPI_Comm_free(&g);
	free(dst);
	free(got);
}

static void cart_nbrs(int n)
{
	int dims[1] = { n }, per[1] = { 1 };
	MPI_Comm c;
	OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &c));
	int snd[2] = { 100 * t_rank, 100 * t_rank + 1 }, rcv[2] = { -1, -1 };
	int lo = (t_rank + n - 1) % n, hi = (t_rank + 1) % n;
	OK(MPI_Neighbor_alltoall(snd, 1, MPI_INT, rcv, 1, MPI_INT, c));
	/* from below: what it sent up (its block 1); from above: its block 0 */
	CHECK(rcv[0] == 100 * lo + 1 && rcv[1] == 100 * hi, "periodic ring of %d: %d %d, want %d %d", n, rcv[0],
	      rcv[1], 100 * lo + 1, 100 * hi);
	MPI_Comm_free(&c);
	/* a 2-d grid without wrap: off the edges nothing comes */
	int d2[2] = { 0, 0 }, p2[2] = { 0, 0 }, v = t_rank, g[4] = { -1, -1, -1, -1 };
	MPI_Dims_create(n, 2, d2);
	OK(MPI_Cart_create(MPI_COMM_WORLD, 2, d2, p2, 0, &c));
	OK(MPI_Neighbor_allgather(&v, 1, MPI_INT, g, 1, MPI_INT, c));
	for (int k = 0; k < 4; k++) {
		int src, dst;
		MPI_Cart_shift(c, k / 2, 1, &src, &dst);
		int from = k % 2 ? dst : src, want = from == MPI_PROC_NULL ? -1 : from;
		CHECK(g[k] == want, "grid %dx%d: block %d = %d, want %d", d2[0], d2[1], k, g[k], want);
	}
	t_fails_with(MPI_Neighbor_allgather(MPI_IN_PLACE, 1, MPI_INT, g, 1, MPI_INT, c), MPI_ERR_BUFFER,
		     "MPI_IN_PLACE is not allowed", "neighbour allgather in place");
	MPI_Comm_free(&c);
}

static void alltoallw(int n)
{
	/* to rank j: j + 1 ints 1000 r + j + t; from rank s: one block of
	 * our rank + 1 ints as a contiguous type */
	int *sc = malloc(sizeof(int) * 4 * (size_t)n), *sd = sc + n, *rc = sd + n, *rd = rc + n;
	MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * 2 * (size_t)n), *rt = st + n, mine;
	OK(MPI_Type_contiguous(t_rank + 1, MPI_INT, &mine));
	OK(MPI_Type_commit(&mine));
	int total = n * (n + 1) / 2, *sb = malloc(sizeof(int) * (size_t)total);
	int *rb = malloc(sizeof(int) * (size_t)n * (size_t)(t_rank + 1));
	for (int j = 0, at = 0; j < n; j++) {
		sc[j] = j + 1;
		sd[j] = at * (int)sizeof(int);
		st[j] = MPI_INT;
		for (int t = 0; t <= j; t++)
			sb[at++] = 1000 * t_rank + j + t;
		rc[j] = 1;
		rd[j] = j * (t_rank + 1) * (int)sizeof(int);
		rt[j] = mine;
	}
	OK(MPI_Alltoallw(sb, sc, sd, st, rb, rc, rd, rt, MPI_COMM_WORLD));
	int bad = 0;
	for (int s = 0; s < n; s++)
		for (int t = 0; t <= t_rank; t++)
			bad += rb[s * (t_rank + 1) + t] != 1000 * s + t_rank + t;
	CHECK(bad == 0, "alltoallw: %d wrong ints", bad);
	/* in place: our block j (r + 1 ints) goes to rank j, its comes back */
	for (int j = 0; j < n; j++)
		for (int t = 0; t <= t_rank; t++)
			rb[j * (t_rank + 1) + t] = 10 * t_rank + j;
	OK(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, rb, rc, rd, rt, MPI_COMM_WORLD));
	bad = 0;
	for (int j = 0; j < n; j++)
		bad += rb[j * (t_rank + 1)] != 10 * j + t_rank;
	CHECK(bad == 0, "alltoallw in place: %d wrong blocks", bad);
	/* one element of a zero-size type against zero ints: nothing moves,
	 * and nobody waits for it (PTL_COLL_TIMEOUT in mpi_graph.sh) */
	MPI_Datatype empty;
	OK(MPI_Type_contiguous(0, MPI_INT, &empty));
	OK(MPI_Type_commit(&empty));
	for (int j = 0; j < n; j++) {
		sc[j] = 1, st[j] = empty;
		rc[j] = 0, rt[j] = MPI_INT;
	}
	OK(MPI_Alltoallw(sb, sc, sd, st, rb, rc, rd, rt, MPI_COMM_WORLD));
	OK(MPI_Alltoallw(sb, rc, rd, rt, rb, sc, sd, st, MPI_COMM_WORLD));
	MPI_Type_free(&empty);
	sc[0] = -1;
	t_fails_with(MPI_Alltoallw(sb, sc, sd, st, rb, rc, rd, rt, MPI_COMM_WORLD), MPI_ERR_COUNT,
		     "sendcounts[0] = -1 < 0", "a negative send count");
	t_fails_with(MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TOPOLOGY,
		     "has no topology", "a neighbourhood collective without a topology");
	MPI_Type_free(&mine);
	free(sc);
	free(st);
	free(sb);
	free(rb);
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	graph_ring(t_size);
	dist_ring(t_size);
	dist_star(t_size);
	cart_nbrs(t_size);
	alltoallw(t_size);
	return t_finish("mpi_graph");
}
