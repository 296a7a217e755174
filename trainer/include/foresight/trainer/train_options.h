// TrainOptions: everything `foresight train` (and a C++ caller of
// trainer::Train) can set for node-classification training of a GNN. A plain
// struct; fields carry their defaults. Validate() before use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "foresight/core/status.h"

namespace foresight::trainer {

// hot_fraction's auto value with the lookahead policy: no tier. On R-MAT
// (1M nodes, caches of 2-20% of the rows) a tier of the highest in-degree
// rows made the lookahead cache read more rows at every split tried
// (0.1-1.0 of the cache; 1.38x the reads at 0.5 of a 5% cache), since
// Belady inside the window already keeps the rows it will reuse
// (bench/RESULTS.md, "A static tier for the hottest rows").
inline constexpr float kAutoHotFraction = 0.0f;
// The auto lookahead, read gap and companion span where
// TrainOptions::PartitionDiskReads() (bench/RESULTS.md, "Fewer reads for
// the community graph": 161k reads an epoch against 732k with 32, 0 and
// 4 KiB).
inline constexpr int kPartitionDiskLookahead = 64;
inline constexpr int64_t kPartitionDiskReadGap = int64_t{12} << 10;
inline constexpr int64_t kPartitionDiskCompanionSpan = int64_t{64} << 10;

struct TrainOptions {
  // Dataset directory (storage::Dataset layout). Required.
  std::string dataset;
  // Model: "sage" (GraphSAGE, mean aggregator), "gcn" or "gat" on a graph
  // dataset; "dlrm" on a clicks dataset (the DLRM fields below); "sasrec"
  // on a sequences dataset (the SASRec fields below); for
  // task = link "distmult", "complex", "transe" or "dot". Default: sage
  std::string model = "sage";
  // What the model reads as node features:
  //   "file"      the dataset's features (dense features.npy, or the sparse
  //               CSR arrays, which go through the model's input table);
  //   "degree"    computed from the graph: log(1 + in-degree) and a one-hot
  //               of floor(log2(1 + in-degree)) in 16 buckets (17 columns);
  //   "one-hot"   node identity: row v is e_v, read as row v of the model's
  //               input table (never a dense N x N matrix);
  //   "learned:DIM" a learned embedding of DIM values per node (an
  //               embed/ table on the feature store below, updated by the
  //               sparse optimizer), read as the model's input rows;
  //   "file+learned:DIM" the dataset's dense features with DIM learned
  //               values beside them (the store and cache options then
  //               apply to the file's rows; the table has no cache).
  // A dataset without features needs degree, one-hot or learned:DIM.
  // Default: file
  std::string node_features = "file";
  // learned:DIM and dlrm: the optimizer of the embedding rows, fused into
  // the backward pass with its state beside each row: "sgd",
  // "rowwise-adagrad" (one f32 of state a row) or "adam" (2 x DIM).
  // Default: rowwise-adagrad
  std::string sparse_optimizer = "rowwise-adagrad";
  // learned:DIM and dlrm: the sparse optimizer's learning rate. Default: 0.05
  float sparse_lr = 0.05f;
  // Where file-backed embedding tables go. learned:DIM with feature_store
  // mmap or disk: the directory of the table's file (learned_rows.npy,
  // replaced by each run); dlrm with table_store mmap, disk or rocksdb: a
  // new directory in it (foresight-tables-XXXXXX), removed when training
  // ends. Default: "" = a temporary directory ($TMPDIR, else /tmp), removed
  // when training ends
  std::string table_dir;
  // Number of passes over the training ids. Default: 200
  int epochs = 200;
  // Training seeds per mini-batch (ignored with full_graph). Default: 1024
  int64_t batch_size = 1024;
  // Neighbours sampled per layer, seeds outward (fanouts[0] is the hop next
  // to the seeds); -1 takes all neighbours. One entry per layer; ignored with
  // full_graph. Default: {15, 10}
  std::vector<int64_t> fanouts = {15, 10};
  // Train on the whole graph: one block per layer, one step per epoch over all
  // training ids. Default: false (mini-batches of sampled neighbourhoods)
  bool full_graph = false;
  // Hidden width (per head for gat). Default: 64
  int64_t hidden = 64;
  // Message-passing layers. Default: 2
  int layers = 2;
  // Attention heads of gat's hidden layers (the output layer has 1). Default: 8
  int heads = 8;
  // Learning rate. Default: 0.01
  float lr = 0.01f;
  // L2 penalty (coupled for adam and sgd, decoupled for adamw), applied to
  // every parameter. Default: 5e-4
  float weight_decay = 5e-4f;
  // Dropout probability on every layer's input, and on gat's attention
  // coefficients. Default: 0.5
  float dropout = 0.5f;
  // Dropout probability on the first layer's input (the node features),
  // where a negative value means `dropout`. 0 drops out between layers only,
  // as DGL's and PyG's GraphSAGE examples do; it skips a random draw per
  // input feature, the largest dropout of a step. sage, gcn and gat only
  // (refused for other models). Default: -1 (= dropout)
  float input_dropout = -1.0f;
  // "adam", "adamw" or "sgd". Default: adam
  std::string optimizer = "adam";
  // Stop after this many epochs without a better validation accuracy; 0 never
  // stops early. Default: 0
  int patience = 0;
  // Seeds initialisation, dropout, seed order and sampling. Default: 0
  uint64_t seed = 0;
  // CPU threads; 0 = online CPUs. Results do not depend on it. Default: 0
  int threads = 0;
  // Where training runs: "cpu", or "cuda" / "cuda:N". A CUDA device is
  // refused (CheckTrainDevice) where it is not usable, never replaced by
  // the CPU. Default: cpu
  std::string device = "cpu";
  // JSON-lines metrics file, one line per epoch and a final line; "" = none.
  // Default: ""
  std::string metrics_file;
  // Checkpoint directory, written after every epoch; "" = none. Default: ""
  std::string checkpoint_dir;
  // Continue from the last epoch completed in checkpoint_dir (a checkpoint
  // of the same configuration; epochs may grow), or start from epoch 1 when
  // it holds no complete checkpoint. The metrics file keeps the lines of the
  // epochs the checkpoint holds and is appended to. Default: false
  bool resume = false;
  // Destination nodes per chunk in layer-wise full-neighbour inference
  // (evaluation of mini-batch models). gcn evaluates each layer over the whole
  // graph at once instead, since its symmetric normalisation needs every
  // node's full out-degree. Default: 4096
  int64_t eval_batch_size = 4096;
  // Print a progress line per epoch (and batch) on the terminal. Default: true
  bool progress = true;

  // --- Out-of-core mini-batch training (full_graph rejects non-default
  // values). The store, cache and budget options never change the results:
  // losses and accuracies are the same bits for any store, policy, cache
  // size, lookahead, io depth or budget. order and sampling do change them.

  // Where training reads node features: "memory" (the features file loaded
  // into RAM), "mmap" (mapped read-only; touched pages count as RSS; today's
  // behaviour) or "disk" (O_DIRECT reads on io_uring: RAM holds only the
  // cache and the batches in flight). learned:DIM keeps its table there
  // (mmap and disk: a file in table_dir), behind the feature cache options
  // below. Default: mmap
  std::string feature_store = "mmap";
  // How sampling holds the graph's CSR: "mapped" (mmap'd; every page read
  // stays in the resident set, so the whole CSR counts against
  // memory_budget) or "paged" (mmap'd, and each sampler call gives back the
  // pages it read: the topology costs one batch's rows; the same samples,
  // bit for bit). Default: mapped
  std::string topology = "mapped";
  // Feature cache policy: "lookahead" (evict the row used farthest in the
  // next `lookahead` batches), "lru" or "static" (the rows of highest
  // in-degree, filled once). Default: lookahead
  std::string cache_policy = "lookahead";
  // Feature cache capacity in bytes; 0 = no cache (every row of every batch
  // is read from the store); -1 = sized from memory_budget when one is given,
  // else 0. Default: -1
  int64_t cache_size = -1;
  // Batches the sampler runs ahead of training, which the cache planner sees
  // (W). -1 = auto (EffectiveLookahead): kPartitionDiskLookahead where
  // PartitionDiskReads(), else 32. 32: on the 1M-node speed graph at a 10%
  // cache, lookahead's bytes read fall from 0.67x LRU's at W = 8 to 0.54x
  // at 32, and W = 64 reads exactly what 32 does (bench/RESULTS.md); a
  // window costs only sampled blocks (a few MB per batch). Under the
  // partition order on disk, 64 batches reach about 7 partition groups and
  // the community graph's reads fell from 237k to 161k an epoch (RESULTS,
  // "Fewer reads for the community graph"). Default: -1
  int lookahead = -1;
  // Disk store: I/O requests in flight. Default: 64
  int io_depth = 64;
  // Disk store (features, or DLRM tables) with the lookahead cache: "on"
  // fetches, with each miss, the rows on its 4 KiB page that the window
  // needs and the cache admits
  // (CacheConfig::page_rows; rows of at most 2 KiB that divide 4096): the
  // same read serves them. "off": only the batch's own rows. Results are
  // the same bits either way. Default: on
  std::string page_companions = "on";
  // Disk store: reads of a batch whose 4 KiB-aligned spans lie at most this
  // many bytes apart become one request, the bytes between read and dropped
  // (storage::RowStoreOptions::max_read_gap_bytes): fewer, longer reads for
  // rows that are near each other but not adjacent (partition order).
  // Results are the same bits either way. -1 = auto (EffectiveReadGap):
  // kPartitionDiskReadGap where PartitionDiskReads(), else 0 (only touching
  // spans). Default: -1
  int64_t read_gap = -1;
  // Disk store with page companions on: the aligned span (bytes, a
  // multiple of 4 KiB) from which a miss brings the rows the window needs
  // (CacheConfig::companion_rows). Pair it with read_gap so the span's
  // rows join one read. Results are the same bits either way. -1 = auto
  // (EffectiveCompanionSpan): kPartitionDiskCompanionSpan where
  // PartitionDiskReads(), else 4096 (the page). Default: -1
  int64_t companion_span = -1;
  // GNN feature cache with the lookahead policy: how its planner finds a
  // key's state. "flat": an array over the nodes (24 bytes a node, the
  // fastest lookups); "window": a map of the keys it holds, each slot's
  // and the window's (64 bytes a key, sized to the cache and the window,
  // not the graph: at 100M nodes 2.24 GiB against about 0.1 GiB + 64
  // bytes a slot); "auto": under --memory-budget the one that leaves the
  // cache more rows, with --cache-size the smaller. Results are the same
  // bits either way. Default: auto
  std::string planner_index = "auto";
  // GNN feature cache with the lookahead policy: the fraction of its slots
  // that form a static tier beside the lookahead tier, holding the rows of
  // highest in-degree (sampled most often), filled once and never evicted
  // (CacheConfig::hot_slots). In [0, 1]; > 0 only with cache_policy
  // lookahead. -1 = auto: kAutoHotFraction with lookahead, else 0. Results
  // are the same bits either way. Default: -1
  float hot_fraction = -1;
  // How the static tier (hot_fraction > 0) ranks rows: "in-degree" (the
  // rows with the most in-neighbours) or "halo" (--order partition only:
  // the rows that the most edges from other partitions point to, which
  // batches of many partition groups read, where the lookahead window
  // sees only the reuse inside a group). Default: in-degree
  std::string hot_rank = "in-degree";
  // The first of hot_rank, read_gap and companion_span that is not at its
  // default, or nullptr: they shape the GNN feature reads only (other
  // tasks refuse them).
  const char* ChangedFeatureReadOption() const;
  // hot_fraction's value, auto resolved.
  float EffectiveHotFraction() const;
  // The GNN's node features are read from the disk store through the
  // lookahead cache under order partition (task node, a GNN model, mini-
  // batch): a group's rows are contiguous in the file and each batch reads
  // them sparsely, so wider companion spans, joined reads and a longer
  // window cut the reads (4.5x on the community graph, same results).
  bool PartitionDiskReads() const;
  // lookahead, read_gap and companion_span, auto resolved.
  int EffectiveLookahead() const;
  int64_t EffectiveReadGap() const;
  int64_t EffectiveCompanionSpan() const;
  // The whole process's peak RSS target in bytes; 0 = none. With no
  // cache_size the cache takes what the budget leaves after an itemised
  // estimate of everything else; a budget that cannot hold that estimate is
  // an error listing it. Default: 0
  int64_t memory_budget = 0;
  // Several ranks (GNN and DLRM dense parameters): bytes of gradients per
  // all-reduce bucket. Buckets are filled in reverse parameter order for
  // the first step, then in the order rank 0's gradients became ready in it
  // (learned once, as PyTorch DDP does), and each bucket's sum starts as
  // soon as its last gradient is final, overlapping the rest of backward; 0 = one
  // sum of every gradient after backward. Results are the same either way.
  // Default: 4 MiB
  int64_t allreduce_bucket = int64_t{4} << 20;
  // Mini-batch GNN training and shallow link prediction (task link with
  // distmult, complex, transe, dot): work out the memory plan (TrainSummary::
  // memory_plan: the itemised estimate, what scales with the graph and
  // what with the batch, and the smallest memory_budget the run accepts)
  // and return without training. A command-line switch (--plan-only), not
  // a config key. Default: false
  bool plan_only = false;
  // Seed order: "random" (shuffled) or "partition" (random groups of
  // partitions, redrawn every epoch, visited one after another, seeds
  // shuffled within a group; needs a dataset partitioned by `foresight
  // partition`). Default: random
  // Task link (shallow models): "random" (shuffled triples) or "buckets"
  // (edge buckets of entity_partitions partitions in the BETA order of
  // sampler/bucket_order.h for a buffer of resident_partitions partitions;
  // negatives drawn from the resident partitions; the partition loads per
  // epoch and their lower bound are logged).
  std::string order = "random";
  // Task link, order buckets: partitions of the entity table (contiguous id
  // ranges). Default: 0 (none; buckets needs >= 1)
  int entity_partitions = 0;
  // Neighbour sampling: "full" (any in-neighbour) or "resident" (only
  // in-neighbours inside the batch's resident partition group; needs
  // order = partition; fewer rows read, some accuracy cost). Default: full
  std::string sampling = "full";
  // Partitions per group of the partition order (the partitions resident
  // together for --sampling resident); 0 = as many partitions as the
  // feature cache can hold (at least 1). Default: 0
  int resident_partitions = 0;
  // Order partition on several ranks: the ranks the partitions are split
  // between (sampler/owned_partition_order.h). Each rank owns a fixed,
  // balanced set of partitions and takes its part of every global batch
  // from its own partitions' groups, so its reads are its partitions'
  // rows and their sampled halo. 0 = the job's ranks (one rank: the
  // plain partition order). N > 1 on one rank trains the global batches
  // of N ranks (to compare with, or resume, such a run); on N ranks it
  // must be 0 or N. Recorded in checkpoints: a run resumes on as many
  // ranks (or one rank with this N). Default: 0
  int rank_partitions = 0;

  // --- DLRM (model = "dlrm", on a clicks dataset). batch_size, epochs,
  // lr / optimizer / weight_decay (the dense parameters), dropout (on the
  // MLPs' hidden activations), seed, threads, eval_batch_size (samples per
  // evaluation batch), metrics, checkpoints and the cache options
  // (cache_policy, cache_size, lookahead, io_depth, memory_budget) apply too.

  // Widths of the bottom MLP's layers (on the dense features; each layer
  // Linear + ReLU). With interaction "dot" the last is the embedding dim.
  // Default: {512, 256, 64}
  std::vector<int64_t> bottom_mlp = {512, 256, 64};
  // Widths of the top MLP's layers (ReLU between them); the last is 1, the
  // click logit. Default: {512, 256, 1}
  std::vector<int64_t> top_mlp = {512, 256, 1};
  // Columns of every embedding table. Default: 64
  int64_t embedding_dim = 64;
  // "dot" (pairwise dot products of the bottom output and the tables'
  // embeddings, beside the bottom output) or "cat" (concatenation).
  // Default: dot
  std::string interaction = "dot";
  // The tables' optimizer and learning rate: sparse_optimizer and sparse_lr
  // above.
  // Evaluate (and write a metrics line) every N training steps as well as
  // at the end of each epoch; 0 = only at the end of each epoch. Default: 0
  int64_t eval_every = 0;
  // Where the tables live: "memory", "mmap", "disk" (O_DIRECT on io_uring)
  // or "rocksdb"; all but memory go through the cache (cache_policy,
  // cache_size, lookahead). Default: memory
  std::string table_store = "memory";
  // Where mmap, disk and rocksdb tables are created: table_dir above.
  // On several ranks (mpirun -np N): how the tables are split between them,
  // "row" (row id of every table to rank id % N: the load is even however
  // many tables there are and however skewed their ids) or "table" (each
  // table whole on one rank, largest first to the least-loaded rank; needs
  // at least N tables). Each rank keeps its shard on its own table_store
  // behind its own cache. One rank ignores it. Default: row
  std::string sharding = "row";

  // --- Link prediction (task = link; trainer/src/link_*.cc). model is then
  // distmult, complex, transe or dot (shallow: one learnable row per entity
  // and per relation in embed/ tables). batch_size counts positive triples;
  // the rows train with sparse_optimizer and sparse_lr (optimizer and lr
  // are refused: no dense parameters); weight_decay (L2 on the rows a step
  // touches), epochs, patience (on validation MRR), seed, threads,
  // metrics_file, checkpoint_dir, resume, cache_policy, cache_size and
  // lookahead keep their meaning.

  // model sage, gcn or gat with task link: a GNN encoder over the graph
  // (its hidden, layers, heads, dropout, fanouts, node_features, optimizer,
  // lr and weight_decay as for node classification; embedding_dim is its
  // output width) whose output rows are scored by `link_decoder`: "dot"
  // (<h, t>) or "distmult" (<h, r, t>, a learned row per relation, trained
  // by optimizer); learned:DIM input rows train with sparse_optimizer. No
  // checkpoint_dir/resume or order buckets (shallow models only).
  // Default: dot
  std::string link_decoder = "dot";
  // "node" (node classification) or "link". Default: node
  std::string task = "node";
  // Floats per embedding row: embedding_dim above (complex: dim / 2
  // complex numbers, so even).
  // Negatives per chunk of positives, shared by the chunk, for each of the
  // tail and head corruptions (scores are one GEMM per chunk and side).
  // Default: 1000
  int64_t negatives = 1000;
  // Positives per chunk sharing negatives; 0 = the whole batch. Default: 0
  int64_t negative_chunk = 0;
  // "uniform" over entities, or "degree" (proportional to an entity's
  // count of training-triple ends). Default: uniform
  std::string negative_sampling = "uniform";
  // "softmax" (cross entropy of each positive against its chunk's
  // negatives) or "logistic" (softplus of -positive and of each negative,
  // negatives averaged). Default: softmax
  std::string loss = "softmax";
  // softmax only: add log(entities / negatives) to every negative's logit,
  // each uniform negative standing for that many entities, so the loss
  // estimates the softmax over every entity (the 1-vs-all objective of the
  // published recipes) instead of a much easier one over the chunk's
  // negatives. Needs uniform sampling. Default: false
  bool sampled_softmax = false;
  // Regularisation of the positives' head, relation and tail rows: "none",
  // "l2" (sum of squares) or "l3" (sum of cubed moduli, N3), times
  // regularization_weight, averaged over the batch. Default: none
  std::string regularizer = "none";
  float regularization_weight = 0.0f;
  // Reciprocal relations: every relation r gets a second row r' for the
  // reverse direction, and corrupting the head of (h, r, t) ranks heads as
  // tails of (t, r', ?), so head and tail predictions have their own
  // relation rows (symmetric models such as distmult then tell the
  // directions apart). Default: false
  bool reciprocal = false;
  // transe: score = margin - ||h + r - t||. Default: 0
  float margin = 0.0f;
  // Initial embeddings are uniform in [-init_scale, init_scale), a function
  // of (seed, row). Default: 0.001
  float init_scale = 0.001f;
  // Entity table store: table_store above, "memory" or "disk" (a file in a
  // temporary directory behind the cache of cache_size bytes; O_DIRECT
  // reads on io_uring). Results are the same bits for either.
  // Candidates of filtered ranking: 0 = every entity; N = N entities drawn
  // once per evaluation (seeded) for graphs too large to rank in full.
  // Default: 0
  int64_t eval_negatives = 0;
  // Evaluate (and write val_/test_ metrics) every this many epochs and at
  // the last one. Default: 1
  int eval_epochs = 1;
  // Directory to write entity_embeddings.npy, entity_ids.npy,
  // relation_embeddings.npy and relation_names.npy after training; "" =
  // none. Default: ""
  std::string export_dir;

  // --- SASRec (model = "sasrec", on a sequences dataset; trainer/src/
  // sasrec_*.cc). hidden, heads, dropout, lr, optimizer, weight_decay,
  // batch_size (users a batch), epochs, eval_epochs, patience (on validation
  // NDCG@10), seed, threads, eval_batch_size (users an evaluation batch),
  // metrics_file, table_store, table_dir and the cache options apply too.

  // Transformer blocks. Default: 2
  int blocks = 2;
  // Each user's model input is its last max_length actions. Default: 50
  int64_t max_length = 50;
  // Adam's beta2 (dense parameters and the sasrec item table). Default: 0.999
  float adam_beta2 = 0.999f;

  // Checks ranges and combinations; the message names the option.
  Status Validate() const;
  // Validate() for task = link (link_options.cc).
  Status ValidateLink() const;
  // ValidateLink() for a GNN encoder (link_gnn_options.cc).
  Status ValidateLinkGnn() const;
};

}  // namespace foresight::trainer
