#include "background_task.h"

#include <utility>

#ifdef __linux__
#include <pthread.h>
#endif

namespace executorch_openvino {

struct BackgroundTask::State {
  std::function<void()> work;
  bool done = false;
#ifdef __linux__
  pthread_t thread;
  bool started = false;
#endif
  void run() {
    work();
    done = true;
  }
};

namespace {
#ifdef __linux__
void* run_task(void* state) {
  static_cast<BackgroundTask::State*>(state)->run();
  return nullptr;
}
#endif
}  // namespace

BackgroundTask::BackgroundTask(std::function<void()> work) : state_(std::make_unique<State>()) {
  state_->work = std::move(work);
#ifdef __linux__
  state_->started = pthread_create(&state_->thread, nullptr, &run_task, state_.get()) == 0;
#endif
}

BackgroundTask::~BackgroundTask() {
#ifdef __linux__
  if (state_->started) pthread_join(state_->thread, nullptr);
#endif
}

void BackgroundTask::wait() {
#ifdef __linux__
  if (state_->started) {
    pthread_join(state_->thread, nullptr);
    state_->started = false;
  }
#endif
  if (!state_->done) state_->run();
}

}  // namespace executorch_openvino
