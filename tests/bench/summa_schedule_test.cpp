// SUMMA's communication schedule and its predicted time (bench/common/summa_schedule.h) on small
// grids, against sums worked by hand.
#include <vector>

#include "common/summa_schedule.h"
#include "test_main.h"

using namespace dcuda_bench::summa;

namespace {

// Same GPU: 10 us until notified, 1 us per further put; peer: 20 and 2; whatever the senders.
put_cost toy_cost(bool same_gpu, int /*senders_on_gpu*/) {
  return same_gpu ? put_cost{10, 1} : put_cost{20, 2};
}

}  // namespace

DCUDA_TEST(summa_senders_put_along_their_row_then_their_column) {
  const grid g{3, 9};
  DCUDA_CHECK((targets(g, 3, 0) == std::vector<int>{4, 5}));        // (1,0): A along row 1
  DCUDA_CHECK((targets(g, 1, 0) == std::vector<int>{4, 7}));        // (0,1): B down column 1
  DCUDA_CHECK((targets(g, 4, 1) == std::vector<int>{3, 5, 1, 7}));  // (1,1): A, then B
  DCUDA_CHECK(targets(g, 8, 0).empty());                            // (2,2) sends nothing in step 0
  DCUDA_CHECK_EQ(g.gpu(8), 0);
  DCUDA_CHECK_EQ((grid{3, 3}.gpu(8)), 2);
}

DCUDA_TEST(summa_predicted_time_waits_for_the_later_block_and_the_senders_earlier_puts) {
  // 2 x 2 on one GPU. Step 0: rank 0 puts to 1 (arrives at 10), then to 2 (1 + 10 = 11); rank 2
  // puts to 3 (10); rank 1 puts to 3 (10). Ranks need: 0: its last put, 11; 1: A from 0, 10, and
  // its own put, 10; 2: B from 0, 11; 3: 10. Step 1 is the mirror image: 10, 11, 10, 11.
  const grid one_gpu{2, 4};
  DCUDA_CHECK_EQ(predicted_step_us(one_gpu, toy_cost, 0, 0), 11.0);
  DCUDA_CHECK_EQ(predicted_step_us(one_gpu, toy_cost, 1, 0), 10.0);
  DCUDA_CHECK_EQ(predicted_step_us(one_gpu, toy_cost, 2, 0), 11.0);
  DCUDA_CHECK_EQ(predicted_step_us(one_gpu, toy_cost, 3, 0), 10.0);
  DCUDA_CHECK_EQ(predicted_step_us(one_gpu, toy_cost, 1, 1), 11.0);
  DCUDA_CHECK_EQ(predicted_mean_us(one_gpu, toy_cost), (42.0 + 42.0) / 4);
  // Ranks 0, 1 on GPU 0 and 2, 3 on GPU 1. Step 0: rank 0 to 1 (same GPU), then to 2 (peer):
  // 1 + 20 = 21; rank 1 to 3 (peer) 20; rank 2 to 3 (same GPU) 10. Ranks: 21, 20, 21, 20.
  // Step 1: rank 3 to 2 (same), then to 1 (peer): 21; rank 1 to 0: 10; rank 2 to 0 (peer): 20.
  // Ranks: 20, 21, 20, 21.
  const grid two_gpus{2, 2};
  DCUDA_CHECK_EQ(predicted_step_us(two_gpus, toy_cost, 0, 0), 21.0);
  DCUDA_CHECK_EQ(predicted_step_us(two_gpus, toy_cost, 3, 0), 20.0);
  DCUDA_CHECK_EQ(predicted_step_us(two_gpus, toy_cost, 2, 1), 20.0);
  DCUDA_CHECK_EQ(predicted_mean_us(two_gpus, toy_cost), (82.0 + 82.0) / 4);
  // One rank: nothing to send or wait for.
  DCUDA_CHECK_EQ(predicted_mean_us(grid{1, 1}, toy_cost), 0.0);
}

DCUDA_TEST(summa_host_initiated_puts_start_one_after_another_on_each_gpu) {
  // 2 x 2 on one GPU, step 0: the GPU starts rank 0's puts (to 1 at 0, to 2 at 1), then rank 1's
  // (to 3 at 2); rank 2's (to 3) at 3. Arrivals: 1 at 10, 2 at 11, 3 from 1 at 12, from 2 at 13.
  // Ranks: 0: its last put, 11; 1: max(10, 12) = 12; 2: max(11, 13) = 13; 3: 13.
  const grid one_gpu{2, 4};
  const issuing in_turn = issuing::gpu_issues_in_turn;
  DCUDA_CHECK_EQ(predicted_step_us(one_gpu, toy_cost, 0, 0, in_turn), 11.0);
  DCUDA_CHECK_EQ(predicted_step_us(one_gpu, toy_cost, 1, 0, in_turn), 12.0);
  DCUDA_CHECK_EQ(predicted_step_us(one_gpu, toy_cost, 2, 0, in_turn), 13.0);
  DCUDA_CHECK_EQ(predicted_step_us(one_gpu, toy_cost, 3, 0, in_turn), 13.0);
  // Two GPUs (0, 1 and 2, 3), step 0: GPU 0 starts rank 0's to 1 (same) at 0 and to 2 (peer) at
  // 1, then rank 1's to 3 (peer) at 1 + 2 = 3; GPU 1 starts rank 2's to 3 at 0. Ranks: 0: 21;
  // 1: max(10, 23) = 23; 2: max(21, 10) = 21; 3: max(23, 10) = 23. Each GPU apart: as before.
  const grid two_gpus{2, 2};
  DCUDA_CHECK_EQ(predicted_step_us(two_gpus, toy_cost, 1, 0, in_turn), 23.0);
  DCUDA_CHECK_EQ(predicted_step_us(two_gpus, toy_cost, 2, 0, in_turn), 21.0);
  DCUDA_CHECK_EQ(predicted_step_us(two_gpus, toy_cost, 3, 0, in_turn), 23.0);
  DCUDA_CHECK(predicted_mean_us(two_gpus, toy_cost, in_turn) >
              predicted_mean_us(two_gpus, toy_cost));
}

DCUDA_TEST(summa_host_initiated_puts_cost_what_the_gpus_senders_of_the_step_make_them) {
  // Step 0 of 3 x 3 on one GPU: column 0 (ranks 0, 3, 6) and row 0 (0, 1, 2) send: 5 ranks. On two
  // GPUs of 2 ranks each, step 0 of 2 x 2: ranks 0 and 1 send on GPU 0, rank 2 alone on GPU 1.
  DCUDA_CHECK_EQ(senders_on_gpu(grid{3, 9}, 0, 0), 5);
  DCUDA_CHECK_EQ(senders_on_gpu(grid{2, 2}, 0, 0), 2);
  DCUDA_CHECK_EQ(senders_on_gpu(grid{2, 2}, 1, 0), 1);
  // Each further put costs as many us as the GPU has senders. 2 x 2 on one GPU, step 0 (3
  // senders): the GPU starts rank 0's to 1 at 0 and to 2 at 3, rank 1's to 3 at 6, rank 2's to 3
  // at 9; arrivals 10, 13, 16, 19. Ranks: 0: 13; 1: max(10, 16) = 16; 2: max(13, 19) = 19; 3: 19.
  const put_model crowded = [](bool, int senders) { return put_cost{10, double(senders)}; };
  const grid one_gpu{2, 4};
  const issuing in_turn = issuing::gpu_issues_in_turn;
  DCUDA_CHECK_EQ(predicted_step_us(one_gpu, crowded, 0, 0, in_turn), 13.0);
  DCUDA_CHECK_EQ(predicted_step_us(one_gpu, crowded, 1, 0, in_turn), 16.0);
  DCUDA_CHECK_EQ(predicted_step_us(one_gpu, crowded, 2, 0, in_turn), 19.0);
  DCUDA_CHECK_EQ(predicted_step_us(one_gpu, crowded, 3, 0, in_turn), 19.0);
}

DCUDA_TEST(summa_host_initiated_stream_waits_pass_in_turn_after_every_put_of_the_gpu) {
  // 2 x 2 on one GPU, step 0, toy costs: the GPU has started its 4 puts at 4 us. Waits: rank 0
  // none, ranks 1 and 2 one each, rank 3 two; at 5 us each they pass at 9, 14 and 24. Ranks: 0:
  // its last put, 11; 1: max(12, 9) = 12; 2: max(13, 14) = 14; 3: max(13, 24) = 24.
  const grid one_gpu{2, 4};
  const issuing in_turn = issuing::gpu_issues_in_turn;
  DCUDA_CHECK_EQ(predicted_step_us(one_gpu, toy_cost, 0, 0, in_turn, 5), 11.0);
  DCUDA_CHECK_EQ(predicted_step_us(one_gpu, toy_cost, 1, 0, in_turn, 5), 12.0);
  DCUDA_CHECK_EQ(predicted_step_us(one_gpu, toy_cost, 2, 0, in_turn, 5), 14.0);
  DCUDA_CHECK_EQ(predicted_step_us(one_gpu, toy_cost, 3, 0, in_turn, 5), 24.0);
  // Device-initiated ranks wait by themselves: no such cost.
  DCUDA_CHECK_EQ(predicted_step_us(one_gpu, toy_cost, 3, 0, issuing::ranks_issue_apart, 5), 10.0);
}
