// LinkBatcher (link_batches.h).
#include "link_batches.h"

#include <algorithm>

#include "foresight/core/rng.h"

namespace foresight::trainer::internal {
namespace {

// Stream names folded into the seed, so orders and negatives never share draws.
constexpr uint64_t kOrderStream = 0x4C494E4B4F524452ull;     // "LINKORDR"
constexpr uint64_t kNegativeStream = 0x4C494E4B4E454753ull;  // "LINKNEGS"

}  // namespace

LinkBatcher::LinkBatcher(const storage::LinkTriples& triples, const TrainOptions& options)
    : triples_(triples), options_(options), num_train_(triples.train().size(0)) {
  batches_per_epoch_ = (num_train_ + options.batch_size - 1) / options.batch_size;
  if (options.order == "buckets") {
    // Options are valid (ValidateLink): entity_partitions >= 1, resident_partitions >= 2.
    const int p = static_cast<int>(std::min<int64_t>(options.entity_partitions, triples.num_entities()));
    for (int k = 0; k <= p; ++k) partition_begin_.push_back(k * triples.num_entities() / p);
    bucket_rows_.resize(static_cast<size_t>(p) * p);
    const int64_t* t = triples.train().data<int64_t>();
    for (int64_t i = 0; i < num_train_; ++i) {
      bucket_rows_[static_cast<size_t>(PartitionOf(t[3 * i]) * p + PartitionOf(t[3 * i + 2]))].push_back(i);
    }
    partition_loads_ = sampler::PlanBuckets(p, options.resident_partitions, options.seed, 0).value().loads();
    partition_loads_bound_ = sampler::BucketLoadsLowerBound(p, options.resident_partitions);
  }
}

const LinkBatcher::EpochOrder& LinkBatcher::Order(int epoch) {
  auto it = orders_.find(epoch);
  if (it != orders_.end()) return it->second;
  // The window moves forward: orders of earlier epochs are done with.
  orders_.erase(orders_.begin(), orders_.lower_bound(epoch));
  EpochOrder o;
  if (options_.order == "buckets") {
    BucketOrder(epoch, &o);
    return orders_.emplace(epoch, std::move(o)).first->second;
  }
  std::vector<int64_t>& order = o.rows;
  order.resize(static_cast<size_t>(num_train_));
  for (int64_t i = 0; i < num_train_; ++i) order[static_cast<size_t>(i)] = i;
  const RngKey key = RngKey::FromSeed(options_.seed).Fold(kOrderStream).Fold(static_cast<uint64_t>(epoch));
  for (int64_t i = num_train_ - 1; i > 0; --i) {  // Fisher-Yates, one draw per position
    const int64_t j = static_cast<int64_t>(key.Below(static_cast<uint64_t>(i + 1), static_cast<uint64_t>(i), 0));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  return orders_.emplace(epoch, std::move(o)).first->second;
}

int64_t LinkBatcher::Negative(int epoch, int64_t element, int64_t draw, const std::vector<int>* resident) const {
  const RngKey key = RngKey::FromSeed(options_.seed).Fold(kNegativeStream).Fold(static_cast<uint64_t>(epoch));
  if (resident != nullptr) {
    // Bucket order: a resident partition, then a row of it, uniformly.
    const uint64_t e = static_cast<uint64_t>(element), d = static_cast<uint64_t>(draw);
    const int64_t part = (*resident)[static_cast<size_t>(key.Below(resident->size(), e, 2 * d))];
    const int64_t begin = partition_begin_[static_cast<size_t>(part)];
    const int64_t size = partition_begin_[static_cast<size_t>(part) + 1] - begin;
    return begin + static_cast<int64_t>(key.Below(static_cast<uint64_t>(size), e, 2 * d + 1));
  }
  if (options_.negative_sampling == "degree") {
    // An end of a uniformly drawn training triple: entities in proportion
    // to how many training triples name them.
    const uint64_t end = key.Below(static_cast<uint64_t>(2 * num_train_), static_cast<uint64_t>(element),
                                   static_cast<uint64_t>(draw));
    const int64_t* t = triples_.train().data<int64_t>();
    return t[3 * static_cast<int64_t>(end >> 1) + ((end & 1) != 0 ? 2 : 0)];
  }
  return static_cast<int64_t>(key.Below(static_cast<uint64_t>(triples_.num_entities()),
                                        static_cast<uint64_t>(element), static_cast<uint64_t>(draw)));
}

LinkBatch LinkBatcher::Make(int epoch, int64_t index) {
  const EpochOrder& epoch_order = Order(epoch);
  const std::vector<int64_t>& order = epoch_order.rows;
  LinkBatch b;
  b.epoch = epoch;
  b.index = index;
  const int64_t begin = index * options_.batch_size;
  b.size = std::min(options_.batch_size, num_train_ - begin);
  b.chunk = options_.negative_chunk > 0 ? std::min(options_.negative_chunk, b.size) : b.size;
  b.num_chunks = (b.size + b.chunk - 1) / b.chunk;
  b.negatives = options_.negatives;
  const int64_t* t = triples_.train().data<int64_t>();
  for (int64_t i = 0; i < b.size; ++i) {
    const int64_t row = order[static_cast<size_t>(begin + i)];
    b.heads.push_back(t[3 * row]);
    b.relations.push_back(t[3 * row + 1]);
    b.tails.push_back(t[3 * row + 2]);
  }
  b.relation_keys = b.relations;
  if (options_.reciprocal) {
    for (int64_t r : b.relations) b.relation_keys.push_back(r + triples_.num_relations());
  }
  b.entity_keys.reserve(static_cast<size_t>(2 * b.size + 2 * b.num_chunks * b.negatives));
  b.entity_keys.insert(b.entity_keys.end(), b.heads.begin(), b.heads.end());
  b.entity_keys.insert(b.entity_keys.end(), b.tails.begin(), b.tails.end());
  for (int64_t c = 0; c < b.num_chunks; ++c) {
    const std::vector<int>* resident = nullptr;
    if (!epoch_order.step_end.empty()) {  // the buffer state of the chunk's first positive
      const auto step = std::upper_bound(epoch_order.step_end.begin(), epoch_order.step_end.end(),
                                         begin + c * b.chunk) - epoch_order.step_end.begin();
      resident = &epoch_order.resident[static_cast<size_t>(step)];
    }
    for (int side = 0; side < 2; ++side) {
      // Element: (batch, chunk, side) of this epoch (a batch has fewer than
      // 2^20 chunks: batch_size positives); draw: the negative's index.
      const int64_t element = (index << 21) + 2 * c + side;
      for (int64_t k = 0; k < b.negatives; ++k) b.entity_keys.push_back(Negative(epoch, element, k, resident));
    }
  }
  return b;
}

}  // namespace foresight::trainer::internal
