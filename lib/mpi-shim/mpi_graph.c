/* mpi_graph.c: graph and distributed graph topologies (MPI-3.1 7.5.3-7.5.5):
 * MPI_Graph_create and the calls that read one, MPI_Dist_graph_create(_adjacent)
 * and the calls that read one, and the neighbour lists the neighbourhood
 * collectives (mpi_xchg.c) use, Cartesian ones included.
 *
 * As with Cartesian topologies, ranks keep their order ("reorder" changes
 * nothing) and the communicator carries the structure: for MPI_GRAPH the
 * whole graph (every rank gives all of it), for MPI_DIST_GRAPH this rank's
 * sources and destinations with their weights. MPI_Dist_graph_create,
 * whose edges any rank may give, sends each edge to its two ends (an
 * all-to-all of counts, then of the edges) over the new communicator. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

static int unweighted_mark, weights_empty_mark;
int *const MPI_UNWEIGHTED = &unweighted_mark;
int *const MPI_WEIGHTS_EMPTY = &weights_empty_mark;

struct mpi_graph {
	int kind;               /* MPI_GRAPH or MPI_DIST_GRAPH */
	int nin, nout;
	int *in, *out;          /* sources and destinations, in order */
	int *inw, *outw;        /* their weights (MPI_DIST_GRAPH) */
	bool weighted;
	int nnodes, nedges;     /* MPI_GRAPH: the whole graph */
	int *index, *edges;
	int data[];
};

/* One block for every array; the lists are filled by the caller. */
static struct mpi_graph *graph_new(int kind, int nin, int nout, int nnodes, int nedges)
{
	size_t n = 2 * (size_t)nin + 2 * (size_t)nout + (size_t)nnodes + (size_t)nedges;
	struct mpi_graph *g = calloc(1, sizeof *g + sizeof(int) * (n ? n : 1));
	if (!g)
		return NULL;
	*g = (struct mpi_graph){ .kind = kind, .nin = nin, .nout = nout, .nnodes = nnodes, .nedges = nedges };
	g->in = g->data;
	g->inw = g->in + nin;
	g->out = g->inw + nin;
	g->outw = g->out + nout;
	g->index = g->outw + nout;
	g->edges = g->index + nnodes;
	return g;
}

void mpi_graph_free(struct mpi_comm *c)
{
	free(c->graph);
	c->graph = NULL;
}

int mpi_graph_copy(struct mpi_comm *to, const struct mpi_comm *from)
{
	const struct mpi_graph *f = from->graph;
	if (!f)
		return MPI_SUCCESS;
	size_t n = 2 * (size_t)f->nin + 2 * (size_t)f->nout + (size_t)f->nnodes + (size_t)f->nedges;
	to->graph = graph_new(f->kind, f->nin, f->nout, f->nnodes, f->nedges);
	if (!to->graph)
		return MPI_ERR_NO_MEM;
	memcpy(to->graph->data, f->data, sizeof(int) * n);
	to->graph->weighted = f->weighted;
	return MPI_SUCCESS;
}

int mpi_graph_kind(const struct mpi_comm *c)
{
	return c->graph ? c->graph->kind : MPI_UNDEFINED;
}

/* Graph neighbours of rank r: edges[index[r-1] .. index[r]). */
static void graph_span(const struct mpi_graph *g, int r, int *from, int *to)
{
	*from = r ? g->index[r - 1] : 0;
	*to = g->index[r];
}

int mpi_graph_nbrs(struct mpi_comm *c, struct mpi_nbrs *n)
{
	const struct mpi_graph *g = c->graph;
	int from = 0, to = 0;
	if (g->kind == MPI_GRAPH)
		graph_span(g, c->rank, &from, &to);
	int nin = g->kind == MPI_GRAPH ? to - from : g->nin, nout = g->kind == MPI_GRAPH ? to - from : g->nout;
	int *a = malloc(sizeof(int) * 4 * (size_t)(nin + nout + 1));
	if (!a)
		return MPI_ERR_NO_MEM;
	*n = (struct mpi_nbrs){ nin, nout, a, a + nin, a + nin + nout, a + 2 * (nin + nout) };
	for (int i = 0; i < nin; i++) {
		n->in[i] = g->kind == MPI_GRAPH ? g->edges[from + i] : g->in[i];
		n->intag[i] = 0;	/* several edges between two ranks: matched in order */
	}
	for (int i = 0; i < nout; i++) {
		n->out[i] = g->kind == MPI_GRAPH ? g->edges[from + i] : g->out[i];
		n->outtag[i] = 0;
	}
	return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- MPI_GRAPH */

/* nnodes, index[] and edges[] make a graph old's ranks can hold, or the error. */
static int graph_check(const char *fn, MPI_Comm comm_old, const struct mpi_comm *old, int nnodes, const int index[],
		       const int edges[])
{
	if (nnodes < 0 || nnodes > old->size)
		return mpi_err(comm_old, MPI_ERR_ARG, fn, "nnodes %d outside 0..%d (the size of %s)", nnodes, old->size,
			       old->name);
	int nedges = nnodes ? index[nnodes - 1] : 0;
	for (int i = 0; i < nnodes; i++)
		if (index[i] < (i ? index[i - 1] : 0))
			return mpi_err(comm_old, MPI_ERR_ARG, fn, "index[%d] = %d is less than the one before", i, index[i]);
	for (int e = 0; e < nedges; e++)
		if (edges[e] < 0 || edges[e] >= nnodes)
			return mpi_err(comm_old, MPI_ERR_ARG, fn, "edges[%d] = %d is not a node (0..%d)", e, edges[e],
				       nnodes - 1);
	return MPI_SUCCESS;
}

int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
		      MPI_Comm *comm_graph)
{
	static const char fn[] = "MPI_Graph_create";
	(void)reorder;
	struct mpi_comm *old;
	int rc = mpi_topo_base(fn, comm_old, &old);
	if (!rc)
		rc = graph_check(fn, comm_old, old, nnodes, index, edges);
	if (rc)
		return rc;
	int nedges = nnodes ? index[nnodes - 1] : 0;
	/* ranks past the graph get MPI_COMM_NULL */
	rc = PMPI_Comm_split(comm_old, old->rank < nnodes ? 0 : MPI_UNDEFINED, old->rank, comm_graph);
	if (rc || *comm_graph == MPI_COMM_NULL)
		return rc;
	struct mpi_comm *c = mpi_comm_get(*comm_graph);
	c->graph = graph_new(MPI_GRAPH, 0, 0, nnodes, nedges);
	if (!c->graph) {
		PMPI_Comm_free(comm_graph);
		return mpi_err(comm_old, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	memcpy(c->graph->index, index, sizeof(int) * (size_t)nnodes);
	memcpy(c->graph->edges, edges, sizeof(int) * (size_t)nedges);
	return MPI_SUCCESS;
}

/* The rank MPI_Graph_create would give (ranks keep their order here), or
 * MPI_UNDEFINED past the graph. */
int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
	struct mpi_comm *old;
	int rc = mpi_topo_base("MPI_Graph_map", comm, &old);
	if (!rc)
		rc = graph_check("MPI_Graph_map", comm, old, nnodes, index, edges);
	if (!rc)
		*newrank = old->rank < nnodes ? old->rank : MPI_UNDEFINED;
	return rc;
}

/* The communicator and its graph of kind, or the error to return. */
static int graph_arg(const char *fn, MPI_Comm comm, int kind, struct mpi_comm **c)
{
	MPI_CHECK_INIT(fn);
	*c = mpi_comm_get(comm);
	if (!*c)
		return mpi_err_comm(fn, comm);
	if (!(*c)->graph || (*c)->graph->kind != kind)
		return mpi_err(comm, MPI_ERR_TOPOLOGY, fn, "%s has no %s topology", (*c)->name,
			       kind == MPI_GRAPH ? "graph" : "distributed graph");
	return MPI_SUCCESS;
}

int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
	struct mpi_comm *c;
	int rc = graph_arg("MPI_Graphdims_get", comm, MPI_GRAPH, &c);
	if (rc)
		return rc;
	*nnodes = c->graph->nnodes;
	*nedges = c->graph->nedges;
	return MPI_SUCCESS;
}

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
	struct mpi_comm *c;
	int rc = graph_arg("MPI_Graph_get", comm, MPI_GRAPH, &c);
	if (rc)
		return rc;
	const struct mpi_graph *g = c->graph;
	memcpy(index, g->index, sizeof(int) * (size_t)(maxindex < g->nnodes ? (maxindex > 0 ? maxindex : 0) : g->nnodes));
	memcpy(edges, g->edges, sizeof(int) * (size_t)(maxedges < g->nedges ? (maxedges > 0 ? maxedges : 0) : g->nedges));
	return MPI_SUCCESS;
}

/* Node rank's edges [from, to) of comm's graph, or the error to return. */
static int node_edges(const char *fn, MPI_Comm comm, int rank, struct mpi_comm **c, int *from, int *to)
{
	int rc = graph_arg(fn, comm, MPI_GRAPH, c);
	if (rc)
		return rc;
	if (rank < 0 || rank >= (*c)->graph->nnodes)
		return mpi_err(comm, MPI_ERR_RANK, fn, "rank %d is not a node (0..%d)", rank, (*c)->graph->nnodes - 1);
	graph_span((*c)->graph, rank, from, to);
	return MPI_SUCCESS;
}

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
	struct mpi_comm *c;
	int from, to, rc = node_edges("MPI_Graph_neighbors_count", comm, rank, &c, &from, &to);
	if (!rc)
		*nneighbors = to - from;
	return rc;
}

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
	struct mpi_comm *c;
	int from, to, rc = node_edges("MPI_Graph_neighbors", comm, rank, &c, &from, &to);
	for (int i = 0; !rc && i < to - from && i < maxneighbors; i++)
		neighbors[i] = c->graph->edges[from + i];
	return rc;
}

/* ---------------------------------------------------------------- MPI_DIST_GRAPH */

static bool unweighted(const int *w)
{
	return w == MPI_UNWEIGHTED || w == MPI_WEIGHTS_EMPTY;
}

/* Checks ranks r[0..n) of c (MPI_PROC_NULL not allowed) and weights. */
static int check_ends(MPI_Comm comm, const char *fn, const struct mpi_comm *c, int n, const int r[], const int w[],
		      const char *what)
{
	if (n < 0)
		return mpi_err(comm, MPI_ERR_ARG, fn, "%s count %d < 0", what, n);
	for (int i = 0; i < n; i++) {
		if (r[i] < 0 || r[i] >= c->size)
			return mpi_err(comm, MPI_ERR_RANK, fn, "%s[%d] = %d is not a rank of %s", what, i, r[i], c->name);
		if (!unweighted(w) && w[i] < 0)
			return mpi_err(comm, MPI_ERR_ARG, fn, "%s weight [%d] = %d < 0", what, i, w[i]);
	}
	return MPI_SUCCESS;
}

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
				    int outdegree, const int destinations[], const int destweights[], MPI_Info info,
				    int reorder, MPI_Comm *comm_dist_graph)
{
	static const char fn[] = "MPI_Dist_graph_create_adjacent";
	(void)info;
	(void)reorder;
	struct mpi_comm *old;
	int rc = mpi_topo_base(fn, comm_old, &old);
	if (rc)
		return rc;
	rc = check_ends(comm_old, fn, old, indegree, sources, sourceweights, "sources");
	if (!rc)
		rc = check_ends(comm_old, fn, old, outdegree, destinations, destweights, "destinations");
	if (!rc)
		rc = PMPI_Comm_dup(comm_old, comm_dist_graph);
	if (rc)
		return rc;
	struct mpi_comm *c = mpi_comm_get(*comm_dist_graph);
	mpi_topo_free(c);	/* the dup kept comm_old's topology: this one replaces it */
	struct mpi_graph *g = c->graph = graph_new(MPI_DIST_GRAPH, indegree, outdegree, 0, 0);
	if (!g) {
		PMPI_Comm_free(comm_dist_graph);
		return mpi_err(comm_old, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	g->weighted = !(sourceweights == MPI_UNWEIGHTED && destweights == MPI_UNWEIGHTED);
	for (int i = 0; i < indegree; i++) {
		g->in[i] = sources[i];
		g->inw[i] = unweighted(sourceweights) ? 1 : sourceweights[i];
	}
	for (int i = 0; i < outdegree; i++) {
		g->out[i] = destinations[i];
		g->outw[i] = unweighted(destweights) ? 1 : destweights[i];
	}
	return MPI_SUCCESS;
}

/* MPI_Dist_graph_create: edge e is (sources[s], destinations[e], weights[e])
 * for the degrees[s] edges of source s. Each edge goes to its source (an
 * out-edge) and its destination (an in-edge): per peer, (peer, weight,
 * out?) triples in an all-to-all. Each rank keeps its edges in the order
 * of the senders' ranks, then the order given. */
int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
			   const int destinations[], const int weights[], MPI_Info info, int reorder,
			   MPI_Comm *comm_dist_graph)
{
	static const char fn[] = "MPI_Dist_graph_create";
	(void)info;
	(void)reorder;
	struct mpi_comm *old;
	int rc = mpi_topo_base(fn, comm_old, &old);
	if (rc)
		return rc;
	if (n < 0)
		return mpi_err(comm_old, MPI_ERR_ARG, fn, "n %d < 0", n);
	int ne = 0;
	for (int s = 0; s < n; s++) {
		if (sources[s] < 0 || sources[s] >= old->size)
			return mpi_err(comm_old, MPI_ERR_RANK, fn, "sources[%d] = %d is not a rank of %s", s, sources[s],
				       old->name);
		if (degrees[s] < 0)
			return mpi_err(comm_old, MPI_ERR_ARG, fn, "degrees[%d] = %d < 0", s, degrees[s]);
		ne += degrees[s];
	}
	rc = check_ends(comm_old, fn, old, ne, destinations, weights, "destinations");
	if (!rc)
		rc = PMPI_Comm_dup(comm_old, comm_dist_graph);
	if (rc)
		return rc;
	int p = old->size;
	int *cnt = calloc(4 * (size_t)p, sizeof(int)), *sd = cnt + p, *rcnt = sd + p, *rd = rcnt + p;
	int *out = malloc(sizeof(int) * (6 * (size_t)ne + 1)), *in = NULL;
	if (!cnt || !out)
		goto nomem;
	/* triples per peer: to the source (peer = dest, out-edge), to the
	 * destination (peer = source, in-edge) */
	for (int s = 0, e = 0; s < n; s++)
		for (int k = 0; k < degrees[s]; k++, e++) {
			cnt[sources[s]] += 3;
			cnt[destinations[e]] += 3;
		}
	for (int r = 1; r < p; r++)
		sd[r] = sd[r - 1] + cnt[r - 1];
	int *fill = rcnt;	/* borrowed for the fill positions */
	memcpy(fill, sd, sizeof(int) * (size_t)p);
	for (int s = 0, e = 0; s < n; s++)
		for (int k = 0; k < degrees[s]; k++, e++) {
			int w = unweighted(weights) ? 1 : weights[e], *a = out + fill[sources[s]];
			a[0] = destinations[e], a[1] = w, a[2] = 1;
			fill[sources[s]] += 3;
			a = out + fill[destinations[e]];
			a[0] = sources[s], a[1] = w, a[2] = 0;
			fill[destinations[e]] += 3;
		}
	rc = PMPI_Alltoall(cnt, 1, MPI_INT, rcnt, 1, MPI_INT, *comm_dist_graph);
	int total = 0;
	for (int r = 0; !rc && r < p; r++) {
		rd[r] = total;
		total += rcnt[r];
	}
	in = rc ? NULL : malloc(sizeof(int) * ((size_t)total + 1));
	if (!rc && !in)
		goto nomem;
	if (!rc)
		rc = PMPI_Alltoallv(out, cnt, sd, MPI_INT, in, rcnt, rd, MPI_INT, *comm_dist_graph);
	int nin = 0, nout = 0;
	for (int i = 0; !rc && i < total; i += 3)
		in[i + 2] ? nout++ : nin++;
	struct mpi_comm *c = mpi_comm_get(*comm_dist_graph);
	mpi_topo_free(c);
	struct mpi_graph *g = rc ? NULL : (c->graph = graph_new(MPI_DIST_GRAPH, nin, nout, 0, 0));
	if (!rc && !g)
		goto nomem;
	if (g) {
		g->weighted = weights != MPI_UNWEIGHTED;
		nin = nout = 0;
		for (int i = 0; i < total; i += 3) {
			if (in[i + 2]) {
				g->out[nout] = in[i];
				g->outw[nout++] = in[i + 1];
			} else {
				g->in[nin] = in[i];
				g->inw[nin++] = in[i + 1];
			}
		}
	}
	free(cnt);
	free(out);
	free(in);
	if (rc)
		PMPI_Comm_free(comm_dist_graph);
	return rc;
nomem:
	free(cnt);
	free(out);
	free(in);
	PMPI_Comm_free(comm_dist_graph);
	return mpi_err(comm_old, MPI_ERR_NO_MEM, fn, "out of memory for %d edges", ne);
}

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
	struct mpi_comm *c;
	int rc = graph_arg("MPI_Dist_graph_neighbors_count", comm, MPI_DIST_GRAPH, &c);
	if (rc)
		return rc;
	*indegree = c->graph->nin;
	*outdegree = c->graph->nout;
	*weighted = c->graph->weighted;
	return MPI_SUCCESS;
}

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
			      int maxoutdegree, int destinations[], int destweights[])
{
	struct mpi_comm *c;
	int rc = graph_arg("MPI_Dist_graph_neighbors", comm, MPI_DIST_GRAPH, &c);
	if (rc)
		return rc;
	const struct mpi_graph *g = c->graph;
	for (int i = 0; i < g->nin && i < maxindegree; i++) {
		sources[i] = g->in[i];
		if (!unweighted(sourceweights))
			sourceweights[i] = g->inw[i];
	}
	for (int i = 0; i < g->nout && i < maxoutdegree; i++) {
		destinations[i] = g->out[i];
		if (!unweighted(destweights))
			destweights[i] = g->outw[i];
	}
	return MPI_SUCCESS;
}
