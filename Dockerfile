# ProtoLab notebook image: Go, Jupyter from Debian, the GoNB kernel and the module prebuilt.
#   docker build -t protolab .
#   docker run -p 8888:8888 protolab        # then open the printed http://127.0.0.1:8888/?token=... URL
# GOMLX_BACKEND is left unset, so ProtoLab chooses: the pure-Go backend, or XLA when a PJRT plugin is mounted, e.g.
#   docker run --gpus all -v $HOME/.local/lib/go-xla:/root/.local/lib/go-xla -p 8888:8888 protolab
# (README, "GPU and XLA"). The notebooks are built with cgo, so they include the XLA backend.
# It mirrors the Makefile's setup (mk/setup.mk): the same Debian packages, the same pinned Go tools and echarts.
FROM golang:1.26.8-bookworm

ENV DEBIAN_FRONTEND=noninteractive \
    PROTOLAB_ROOT=/protolab \
    PROTOLAB_OUT=/protolab/out \
    GOMLX_NO_AUTO_INSTALL=1 \
    GOEXPERIMENT=simd \
    PATH=/go/bin:/usr/local/go/bin:$PATH

# setup-jupyter, setup-chromium and npm for setup-echarts and brown (Debian packages only).
RUN apt-get update && apt-get install -y --no-install-recommends \
        jupyter-notebook jupyter-nbconvert python3-nbclient jupyter-client chromium npm make git \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /protolab
# Module download first, so code edits do not refetch dependencies.
COPY go.mod go.sum ./
RUN go mod download
COPY . .

# `make setup`: setup-echarts, setup-gonb (bin/gonb from go.mod's pin, goimports, gopls@v0.23.0, gonb --install): the Makefile's
# own targets, so the image cannot drift from `make setup`.
# setup-jupyter and setup-chromium find their packages installed above and do nothing.
RUN make setup \
    && go build ./... \
    && go test -tags noxla -count=1 -run XXX ./... >/dev/null

EXPOSE 8888
CMD ["jupyter", "notebook", "--ip=0.0.0.0", "--port=8888", "--no-browser", "--allow-root", "--notebook-dir=/protolab/notebooks"]
