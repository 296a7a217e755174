// TrainLinkGnn (link_gnn_trainer.h): link prediction with a GNN encoder.
// A step's rows are the encoder's outputs for the batch's distinct
// endpoints (positives' heads and tails and the chunks' negatives), computed
// over one sampled subgraph around all of them; the shared chunk loss
// (link_loss.h) gives the gradient of every position's row, which one tape
// node hands back to the encoder (through a row gather that sums the
// gradients of repeated endpoints); DistMult's relation rows take their
// gradient with the sparse optimizer's fused update, as the shallow
// models' rows do.
#include "link_gnn_trainer.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <unordered_set>
#include <vector>

#include "epoch_runner.h"
#include "foresight/autograd/functional.h"
#include "foresight/autograd/optimizer.h"
#include "foresight/core/logging.h"
#include "foresight/core/thread_pool.h"
#include "foresight/sampler/neighbor_sampler.h"
#include "foresight/storage/dataset.h"
#include "foresight/storage/link_triples.h"
#include "foresight/storage/npy.h"
#include "layerwise_inference.h"
#include "link_batches.h"
#include "link_epochs.h"
#include "link_eval.h"
#include "link_loss.h"
#include "link_scorer.h"
#include "node_data.h"
#include "node_input.h"
#include "temp_dir.h"

namespace foresight::trainer::internal {

using autograd::GraphBlock;
using autograd::Tape;
using autograd::Var;

namespace {

int64_t IndexAt(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kI32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
}

// Refuses a graph that holds a validation or test edge (h -> t) that is
// not also a training pair: message passing over it would show the encoder
// the very edges it is ranked on.
Status CheckNoHeldOutEdges(const storage::Dataset& d, const storage::LinkTriples& lt) {
  const Tensor& indptr = d.indptr();
  const Tensor& indices = d.indices();
  const int64_t* ip = indptr.data<int64_t>();
  const int64_t n = d.num_nodes();
  std::unordered_set<int64_t> train_pairs;
  bool train_pairs_built = false;
  const std::pair<const Tensor*, const char*> splits[] = {{&lt.val(), storage::kLinkValArray},
                                                          {&lt.test(), storage::kLinkTestArray}};
  for (const auto& [triples, name] : splits) {
    const int64_t* t = triples->data<int64_t>();
    for (int64_t i = 0; i < triples->size(0); ++i) {
      const int64_t h = t[3 * i], tail = t[3 * i + 2];
      bool in_graph = false;
      for (int64_t e = ip[tail]; e < ip[tail + 1] && !in_graph; ++e) in_graph = IndexAt(indices, e) == h;
      if (!in_graph) continue;
      if (!train_pairs_built) {
        const int64_t* tr = lt.train().data<int64_t>();
        for (int64_t k = 0; k < lt.train().size(0); ++k) train_pairs.insert(tr[3 * k] * n + tr[3 * k + 2]);
        train_pairs_built = true;
      }
      if (train_pairs.count(h * n + tail) == 0) {
        return FailedPrecondition(d.dir() + ": the graph holds the edge " + std::to_string(h) + " -> " +
                                  std::to_string(tail) + " of " + name + ".npy row " + std::to_string(i) +
                                  ", which is no training triple: a GNN encoder would pass messages over the "
                                  "edges it is ranked on (`foresight preprocess --task link` keeps only the "
                                  "training edges in the graph)");
      }
    }
  }
  return Status::OK();
}

ModelConfig EncoderConfig(const TrainOptions& o, const NodeInput& input) {
  ModelConfig c;
  c.kind = o.model;
  c.in_features = input.width;
  c.node_features = input.kind;
  c.input_table = input.table;
  c.num_classes = o.embedding_dim;  // the encoder's output rows
  c.hidden = o.hidden;
  c.layers = o.layers;
  c.heads = o.heads;
  c.dropout = o.dropout;
  c.input_dropout = o.input_dropout;
  c.seed = o.seed;
  return c;
}

class LinkGnnModel : public LinkModel {
 public:
  LinkGnnModel(const TrainOptions& o, const ExecContext& ctx, const storage::LinkTriples& lt, LinkScorer scorer)
      : o_(o), ctx_(ctx), lt_(lt), scorer_(scorer), batcher_(lt, o), known_(lt.num_relations()) {}

  Status Open() {
    known_.Add(lt_.train());
    known_.Add(lt_.val());
    known_.Add(lt_.test());
    filters_[0] = QueryFilter::Build(ctx_, known_, lt_.val(), {});
    filters_[1] = QueryFilter::Build(ctx_, known_, lt_.test(), {});
    FS_ASSIGN_OR_RETURN(dataset_, storage::Dataset::Open(o_.dataset));
    FS_RETURN_IF_ERROR(CheckNoHeldOutEdges(*dataset_, lt_));
    graph_.indptr = dataset_->indptr();
    graph_.indices = dataset_->indices();
    graph_.num_src = dataset_->num_nodes();
    whole_graph_ = GraphBlock(graph_);
    sampler_ = std::make_unique<sampler::NeighborSampler>(graph_, o_.fanouts, o_.seed);
    eval_sampler_ = std::make_unique<sampler::NeighborSampler>(graph_, o_.fanouts, o_.seed);
    FS_ASSIGN_OR_RETURN(input_, OpenNodeInput(o_.node_features, *dataset_));
    if (input_.is_learned()) {
      // One batch at a time (no window): each step enqueues its input nodes.
      FS_ASSIGN_OR_RETURN(input_.learned, OpenLearnedTable(o_, dataset_->num_nodes(), dataset_->indptr(),
                                                           /*lookahead=*/0, &table_dir_));
    }
    if (!input_.table && input_.dense.defined()) {
      FS_ASSIGN_OR_RETURN(dense_, FeaturesAsF32(ctx_, input_.dense));
    }
    FS_ASSIGN_OR_RETURN(encoder_, CreateModel(EncoderConfig(o_, input_)));
    std::vector<autograd::Parameter*> params = encoder_->Parameters();
    if (scorer_.uses_relation()) {
      // DistMult's relation rows start at 1: the decoder starts as the dot
      // product and learns each relation's weighting from there. They
      // train with the sparse optimizer, as the shallow models' rows do,
      // its state beside each row.
      const int64_t rows = std::max<int64_t>(lt_.num_relations(), 1) * (o_.reciprocal ? 2 : 1);
      relation_layout_.dim = o_.embedding_dim;
      FS_ASSIGN_OR_RETURN(relation_layout_.optimizer, kernels::ParseSparseOptimizer(o_.sparse_optimizer));
      relation_rows_ = Tensor::Zeros({rows, relation_layout_.row_width()}, DType::kF32);
      for (int64_t i = 0; i < rows; ++i) {
        float* row = relation_rows_.data<float>() + i * relation_layout_.row_width();
        for (int64_t k = 0; k < o_.embedding_dim; ++k) row[k] = 1.0f;
      }
      relation_config_.kind = relation_layout_.optimizer;
      relation_config_.lr = o_.sparse_lr;
    }
    autograd::OptimizerOptions oo;
    oo.kind = o_.optimizer;
    oo.lr = o_.lr;
    oo.weight_decay = o_.weight_decay;
    FS_ASSIGN_OR_RETURN(optimizer_, autograd::Optimizer::Create(oo, params));
    position_.assign(static_cast<size_t>(dataset_->num_nodes()), -1);
    return Status::OK();
  }

  Status TrainEpoch(int epoch, const TrainCallbacks& callbacks, double* loss, int64_t* hits,
                    int64_t* misses) override {
    *hits = *misses = 0;
    double sum = 0.0;
    const int64_t n = batcher_.batches_per_epoch();
    for (int64_t b = 0; b < n; ++b) {
      const LinkBatch batch = batcher_.Make(epoch, b);
      double l = 0.0;
      FS_RETURN_IF_ERROR(Step(batch, &l));
      sum += l;
      if (callbacks.on_batch) callbacks.on_batch(epoch + 1, b, n, l);
    }
    *loss = sum / static_cast<double>(n);
    return Status::OK();
  }

  Status BeginEvaluation() override {
    Tensor features;
    if (LearnedNodeTable* learned = input_.learned.get()) {
      FS_ASSIGN_OR_RETURN(features, learned->AllEmbeddings());
      if (dense_.defined()) features = ConcatColumns(dense_, features);  // file+learned
    } else if (input_.table) {
      FS_ASSIGN_OR_RETURN(features, AllInputRows(ctx_, *encoder_, input_));
    } else {
      features = dense_;
    }
    LayerwiseOutputs outputs;
    FS_RETURN_IF_ERROR(LayerwiseInference(ctx_, *encoder_, *eval_sampler_, whole_graph_, features,
                                          o_.eval_batch_size, {}, /*want_embeddings=*/false,
                                          /*whole_graph_per_layer=*/false, &outputs));
    embeddings_ = outputs.logits[0];
    return Status::OK();
  }

  Status Evaluate(const Tensor& triples, RankMetrics* out, uint64_t draw) override {
    auto rows_of = [](const Tensor* table, int64_t dim) {
      return [table, dim](const std::vector<int64_t>& keys, float* out) -> Status {
        for (size_t i = 0; i < keys.size(); ++i) {
          std::memcpy(out + static_cast<int64_t>(i) * dim, table->data<float>() + keys[i] * dim,
                      sizeof(float) * dim);
        }
        return Status::OK();
      };
    };
    const int64_t width = relation_layout_.row_width();
    const EmbeddingReader relations = [this, width](const std::vector<int64_t>& keys, float* out) -> Status {
      if (!relation_rows_.defined()) {  // dot: no relation rows, and its scores read none
        std::fill(out, out + static_cast<int64_t>(keys.size()) * o_.embedding_dim, 0.0f);
        return Status::OK();
      }
      for (size_t i = 0; i < keys.size(); ++i) {
        std::memcpy(out + static_cast<int64_t>(i) * o_.embedding_dim,
                    relation_rows_.data<float>() + keys[i] * width, sizeof(float) * o_.embedding_dim);
      }
      return Status::OK();
    };
    return EvaluateRanking(ctx_, scorer_, rows_of(&embeddings_, o_.embedding_dim), relations,
                           lt_.num_entities(), triples, filters_[draw], {}, out,
                           o_.reciprocal ? lt_.num_relations() : 0);
  }

  Status Export(const std::string& dir) override {
    std::filesystem::create_directories(dir);
    if (!embeddings_.defined()) FS_RETURN_IF_ERROR(BeginEvaluation());
    FS_RETURN_IF_ERROR(storage::SaveNpy(dir + "/entity_embeddings.npy", embeddings_));
    if (relation_rows_.defined()) {
      const int64_t rows = relation_rows_.size(0), d = o_.embedding_dim;
      Tensor emb = Tensor::Empty({rows, d}, DType::kF32);
      for (int64_t i = 0; i < rows; ++i) {
        std::memcpy(emb.data<float>() + i * d, relation_rows_.data<float>() + i * relation_layout_.row_width(),
                    sizeof(float) * d);
      }
      FS_RETURN_IF_ERROR(storage::SaveNpy(dir + "/relation_embeddings.npy", emb));
    }
    const Tensor& ids = dataset_->original_ids();
    if (!ids.defined()) return storage::SaveNpy(dir + "/entity_ids.npy", IdRange(0, lt_.num_entities()));
    return ids.dtype() == DType::kU8 ? storage::SaveNpyBytes(dir + "/entity_ids.npy", ids)
                                     : storage::SaveNpy(dir + "/entity_ids.npy", ids);
  }

 private:
  Status Step(const LinkBatch& b, double* loss) {
    const int64_t d = o_.embedding_dim;
    const int64_t K = static_cast<int64_t>(b.entity_keys.size());
    const int64_t KR = static_cast<int64_t>(b.relation_keys.size());
    // The batch's distinct endpoints in first-use order (the sampler's
    // seeds), and each position's row among them.
    std::vector<int64_t> seeds;
    Tensor positions = Tensor::Empty({K}, DType::kI64);
    int64_t* pos = positions.data<int64_t>();
    for (int64_t i = 0; i < K; ++i) {
      int64_t& slot = position_[static_cast<size_t>(b.entity_keys[static_cast<size_t>(i)])];
      if (slot < 0) {
        slot = static_cast<int64_t>(seeds.size());
        seeds.push_back(b.entity_keys[static_cast<size_t>(i)]);
      }
      pos[i] = slot;
    }
    for (int64_t s : seeds) position_[static_cast<size_t>(s)] = -1;
    const int64_t S = static_cast<int64_t>(seeds.size());
    Tensor seed_ids = Tensor::Empty({S}, DType::kI64);
    std::memcpy(seed_ids.data<int64_t>(), seeds.data(), sizeof(int64_t) * static_cast<size_t>(S));

    sampler::SampledBatch sampled;
    FS_RETURN_IF_ERROR(sampler_->Sample(ctx_, seed_ids, b.epoch, b.index, &sampled));
    std::vector<GraphBlock> blocks;
    blocks.reserve(sampled.blocks.size());
    for (kernels::Csr& csr : sampled.blocks) blocks.emplace_back(std::move(csr));
    std::vector<GraphBlock*> block_ptrs;
    for (GraphBlock& g : blocks) block_ptrs.push_back(&g);

    Tape tape(ctx_.WithRng(StepKey(o_.seed, b.epoch, b.index)), /*training=*/true);
    FS_ASSIGN_OR_RETURN(Var x, Input(tape, sampled.input_nodes));
    FS_ASSIGN_OR_RETURN(Var h, encoder_->Forward(tape, block_ptrs, x));  // [S, d]
    FS_ASSIGN_OR_RETURN(Var e, autograd::GatherRows(tape, h, positions));  // [K, d]

    Tensor r = Tensor::Zeros({KR, d}, DType::kF32);
    if (relation_rows_.defined()) {
      const int64_t width = relation_layout_.row_width();
      for (int64_t i = 0; i < KR; ++i) {
        const float* row = relation_rows_.data<float>() + b.relation_keys[static_cast<size_t>(i)] * width;
        std::memcpy(r.data<float>() + i * d, row, sizeof(float) * d);
      }
    }
    Tensor de = Tensor::Zeros({K, d}, DType::kF32), dr = Tensor::Zeros({KR, d}, DType::kF32);
    double l = 0.0;
    FS_RETURN_IF_ERROR(LinkBatchLoss(ctx_, o_, scorer_, lt_.num_entities(), b, e.value(), r, &de, &dr, &l));
    *loss = l;

    // The loss as a tape node: its backward hands de to the gathered rows
    // (the loss is the root: its gradient is 1, so dr is the relation
    // rows' gradient as it stands).
    Tensor value = Tensor::Empty({1}, DType::kF32);
    value.data<float>()[0] = static_cast<float>(l);
    Var loss_var = tape.RecordGrad({e}, value, [e, de](const ExecContext& ctx, const Tensor& grad_out) -> Status {
      const float g = grad_out.data<float>()[0];
      Tensor scaled = de;
      if (g != 1.0f) {
        scaled = de.Clone();
        float* p = scaled.data<float>();
        for (int64_t i = 0; i < scaled.numel(); ++i) p[i] *= g;
      }
      return e.AccumulateGrad(ctx, scaled);
    });
    optimizer_->ZeroGrad();
    FS_RETURN_IF_ERROR(tape.Backward(loss_var));
    FS_RETURN_IF_ERROR(optimizer_->Step(ctx_));
    if (!relation_rows_.defined()) return Status::OK();
    // The relation rows' fused sparse update: one row per position, the
    // gradients of a repeated relation summed in a fixed order.
    Tensor ids = Tensor::Empty({KR}, DType::kI64), offsets = Tensor::Empty({KR + 1}, DType::kI64);
    for (int64_t i = 0; i < KR; ++i) ids.data<int64_t>()[i] = b.relation_keys[static_cast<size_t>(i)];
    for (int64_t i = 0; i <= KR; ++i) offsets.data<int64_t>()[i] = i;
    relation_config_.step = ++relation_steps_;
    return kernels::EmbeddingBagBackwardUpdate(ctx_, relation_layout_, relation_config_, Tensor(), ids, offsets,
                                               Tensor(), kernels::Pooling::kSum, dr, &relation_rows_);
  }

  // Layer 0's input rows for `nodes` on `tape`.
  StatusOr<Var> Input(Tape& tape, const Tensor& nodes) {
    if (LearnedNodeTable* learned = input_.learned.get()) {
      FS_RETURN_IF_ERROR(learned->Enqueue(nodes));
      Tensor file_rows;
      if (dense_.defined()) {
        file_rows = Tensor::Empty({nodes.numel(), dense_.size(1)}, DType::kF32);
        FS_RETURN_IF_ERROR(kernels::GatherRows(ctx_, dense_, nodes, &file_rows));
      }
      return learned->Forward(tape, optimizer_->step_count() + 1, file_rows);
    }
    return InputRows(tape, *encoder_, input_, nodes);
  }

  const TrainOptions& o_;
  ExecContext ctx_;
  const storage::LinkTriples& lt_;
  LinkScorer scorer_;
  LinkBatcher batcher_;
  KnownTriples known_;
  QueryFilter filters_[2];  // validation, test
  std::unique_ptr<storage::Dataset> dataset_;
  kernels::Csr graph_;
  GraphBlock whole_graph_;
  std::unique_ptr<sampler::NeighborSampler> sampler_, eval_sampler_;
  NodeInput input_;
  Tensor dense_;  // the dataset's dense rows as f32 (file, degree, file+learned)
  std::unique_ptr<TempDir> table_dir_;
  std::unique_ptr<GnnModel> encoder_;
  // distmult: [R (2R reciprocal), row_width]: each relation's row and its
  // sparse optimizer state.
  kernels::EmbeddingRowLayout relation_layout_;
  Tensor relation_rows_;
  kernels::SparseOptimizerConfig relation_config_;
  int64_t relation_steps_ = 0;
  std::unique_ptr<autograd::Optimizer> optimizer_;
  std::vector<int64_t> position_;  // node -> its row among a step's seeds, -1 between steps
  Tensor embeddings_;              // every node's output row, from the last evaluation
};

}  // namespace

bool IsGnnLinkModel(const std::string& model) { return model == "sage" || model == "gcn" || model == "gat"; }

Status TrainLinkGnn(const TrainOptions& o, const TrainCallbacks& callbacks, TrainSummary* out) {
  ThreadPool pool(o.threads);
  const ExecContext ctx = CpuContext(o.seed, &pool);
  FS_ASSIGN_OR_RETURN(std::unique_ptr<storage::LinkTriples> lt, storage::LinkTriples::Open(o.dataset));
  FS_ASSIGN_OR_RETURN(LinkScorer scorer, LinkScorer::Create(o.link_decoder, o.embedding_dim, 0.0f));
  if (lt->layout().unseen_entities > 0) {
    FS_LOG(INFO) << lt->layout().unseen_entities
                 << " entities appear only in validation or test triples; the encoder sees them through their "
                    "training-graph neighbours only";
  }
  LinkGnnModel model(o, ctx, *lt, scorer);
  FS_RETURN_IF_ERROR(model.Open());
  return RunLinkEpochs(o, *lt, model, callbacks, out);
}

}  // namespace foresight::trainer::internal
