# GAIA agent harness — the Gradio app for a Docker Space or local use.
#   docker build -t gaia-harness .
#   docker run --rm -p 7860:7860 --env-file .env gaia-harness        # then open http://localhost:7860
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    GRADIO_ANALYTICS_ENABLED=False \
    GRADIO_SERVER_NAME=0.0.0.0 \
    GRADIO_SERVER_PORT=7860

# OCR (image_ocr), audio decoding (transcribe_audio), the run_python sandbox, speech fixtures, the browser tools.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tesseract-ocr tesseract-ocr-eng ffmpeg bubblewrap espeak-ng chromium \
 && rm -rf /var/lib/apt/lists/*

# Hugging Face Spaces run containers as uid 1000. The app folder is the user's (created by them, not by
# WORKDIR as root), so runs/ and data/ are writable there; the app falls back to ~/.cache when they are not.
RUN useradd --create-home --uid 1000 user
USER user
ENV HOME=/home/user \
    PATH=/home/user/.local/bin:$PATH
RUN mkdir -p /home/user/app
WORKDIR /home/user/app

# requirements.txt names PyTorch's CPU index and pins the `+cpu` wheel (PyPI's torch pulls several GB of CUDA).
COPY --chown=user:user requirements.txt .
RUN pip install --user -r requirements.txt
# yt-dlp's JavaScript runtime for YouTube: the `deno` wheel's binary (tools/media/video/youtube.py names its path to
# yt-dlp as js_runtimes) and yt-dlp-ejs's solver scripts; checked here so a build without them fails.
ENV DENO_NO_UPDATE_CHECK=1 \
    DENO_NO_PROMPT=1
RUN python -c "import deno, yt_dlp_ejs, subprocess; subprocess.run([deno.find_deno_bin(), '--version'], check=True)"

COPY --chown=user:user . .

EXPOSE 7860
# gradio treats itself as on a Space (Sign-in button, /login, real OAuth) only with SYSTEM=spaces, which a
# Docker Space does not set; its runtime sets SPACE_ID and, with `hf_oauth: true` in the card, the OAUTH_*
# variables. So SYSTEM=spaces is set here only when both are present: a local `docker run` stays local.
CMD ["sh", "-c", "if [ -n \"$SPACE_ID\" ] && [ -n \"$OAUTH_CLIENT_ID\" ]; then export SYSTEM=\"${SYSTEM:-spaces}\"; fi; exec python app.py"]
