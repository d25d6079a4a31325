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

# Hugging Face Spaces run containers as uid 1000.
RUN useradd --create-home --uid 1000 user
WORKDIR /home/user/app

# torch first, as the CPU wheel (the default index pulls several GB of CUDA); requirements.txt pins the same version.
COPY requirements.txt .
RUN pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu \
 && pip install -r requirements.txt

COPY --chown=user:user . .
USER user
ENV HOME=/home/user \
    PATH=/home/user/.local/bin:$PATH

EXPOSE 7860
CMD ["python", "app.py"]
